/**
 * A domain error as a value: a stable code a client can branch on, a message for people, the part of the
 * request it is about (target), and the facts a caller may need to answer it (when to retry, where reading
 * stopped). It says nothing about HTTP; the edge (http/error-status.ts) gives each code its status.
 * This is the type and how a section of the catalogue is defined (defineErrors); the sections (request-errors.ts,
 * server-errors.ts, …) hold the codes, and catalogue.ts gathers them, ServiceError with them, for the rest of src/.
 */
export interface ErrorDetail {
  readonly code: string;
  readonly message: string;
  readonly target?: string;
}

export interface ErrorFacts {
  /** Seconds after which the same request may succeed (a rate window resets, the database comes back). */
  readonly retryAfterSeconds?: number;
  /** Credentials were presented and refused, as opposed to none presented. */
  readonly credentialsRefused?: boolean;
  /** Offset in the target option's text where reading stopped (syntax errors). */
  readonly position?: number;
}

export class ServiceError<C extends string = string> extends Error {
  constructor(
    readonly code: C,
    message: string,
    readonly target?: string,
    readonly facts: ErrorFacts = {},
    readonly details: readonly ErrorDetail[] = [],
  ) {
    super(message);
    this.name = code;
  }
}

/** How one code's errors are worded: the message, and optionally the target and facts, from the same arguments. */
export interface ErrorTemplate<A extends unknown[]> {
  readonly message: (...args: A) => string;
  readonly target?: string | ((...args: A) => string | undefined);
  readonly facts?: (...args: A) => ErrorFacts;
}

/** Makes errors of one code; its `code` is readable without making one. */
export type ErrorFactory<C extends string, A extends unknown[]> = ((...args: A) => ServiceError<C>) & { readonly code: C };

/** A template's arguments are its message's; target and facts read the same ones (or a prefix of them). */
type ArgsOf<T> = T extends { readonly message: (...args: infer A) => string } ? A : never;

export type ErrorFactories<T> = { readonly [C in keyof T & string]: ErrorFactory<C, ArgsOf<T[C]>> };

/** One factory per template, each making errors whose code is the template's key. */
export function defineErrors<T extends { readonly [C in keyof T]: ErrorTemplate<ArgsOf<T[C]>> }>(templates: T): ErrorFactories<T> {
  const out: Record<string, unknown> = {};
  for (const [code, t] of Object.entries(templates) as [string, ErrorTemplate<unknown[]>][]) {
    const make = (...args: unknown[]) => new ServiceError(
      code,
      t.message(...args),
      typeof t.target === 'function' ? t.target(...args) : t.target,
      t.facts?.(...args) ?? {},
    );
    out[code] = Object.assign(make, { code });
  }
  return out as ErrorFactories<T>;
}
