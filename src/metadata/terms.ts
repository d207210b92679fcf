/** The RESO term naming a field's lookup; the documents declare it, as RESO publishes no vocabulary file for it. */
export const LOOKUP_NAME_TERM = termOf('RESO.OData.Metadata.LookupName');

/**
 * The term stating a set's fields filtered and ordered without an index. No standard term says what a query
 * on them costs (Capabilities says only whether a field may be filtered), so the service declares its own.
 */
export const UNINDEXED_TERM = {
  ...termOf('ResoServer.Policy.UnindexedProperties'),
  description: 'Properties this service filters and orders by without an index, by scanning the entity set: a '
    + 'request whose scan takes longer than the service allows one statement answers 501 ScanLimitExceeded. '
    + 'A condition on an indexed property beside them narrows the scan.',
};

function termOf(qualified: string): { readonly qualified: string; readonly namespace: string; readonly name: string } {
  const dot = qualified.lastIndexOf('.');
  return { qualified, namespace: qualified.slice(0, dot), name: qualified.slice(dot + 1) };
}
