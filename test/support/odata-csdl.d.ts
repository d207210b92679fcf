// The part of odata-csdl's API the tests use (the package ships no types).
declare module 'odata-csdl' {
  interface Xml2JsonOptions {
    lineNumbers?: boolean;
    annotations?: boolean;
    /** Throw on the first error instead of recording it. */
    strict?: boolean;
    /** Filled with what the conversion found wrong. */
    messages?: unknown[];
  }
  export function xml2json(xml: string, options?: Xml2JsonOptions): unknown;
}
