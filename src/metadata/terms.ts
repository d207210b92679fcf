/** The RESO term naming a field's lookup; the documents declare it, as RESO publishes no vocabulary file for it. */
export const LOOKUP_NAME_TERM = termOf('RESO.OData.Metadata.LookupName');

function termOf(qualified: string): { readonly qualified: string; readonly namespace: string; readonly name: string } {
  const dot = qualified.lastIndexOf('.');
  return { qualified, namespace: qualified.slice(0, dot), name: qualified.slice(dot + 1) };
}
