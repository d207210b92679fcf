/**
 * A dictionary the generator refuses, and where in the file the refusal is about: a position, or an element by
 * kind and name, found in the text when the refusal is reported (dictionary-text.ts, `refusalLine`). The one
 * line an operator reads is `file:line:column: message`.
 */

/** An element of the dictionary, by what names it. */
export type ElementRef =
  | { readonly kind: 'EntityType' | 'EnumType' | 'EntitySet'; readonly name: string }
  | { readonly kind: 'Property' | 'NavigationProperty'; readonly type: string; readonly name: string }
  | { readonly kind: 'NavigationPropertyBinding'; readonly set: string; readonly path: string };

export interface TextPosition {
  readonly line: number;
  readonly column?: number;
}

export class DictionaryError extends Error {
  constructor(message: string, readonly at?: ElementRef | TextPosition) {
    super(message);
  }
}

export const entityTypeRef = (name: string): ElementRef => ({ kind: 'EntityType', name });
export const entitySetRef = (name: string): ElementRef => ({ kind: 'EntitySet', name });
export const propertyRef = (type: string, name: string): ElementRef => ({ kind: 'Property', type, name });
export const navigationRef = (type: string, name: string): ElementRef => ({ kind: 'NavigationProperty', type, name });

/** What a generator command refuses or fails at, as the one line the operator reads and the exit code to end with. */
export class CommandRefusal extends Error {
  constructor(message: string, readonly exitCode: 1 | 2 = 2) {
    super(message);
  }
}

/** A refused dictionary as the operator reads it: one line, `file:line:column: message`; exit code 2 (usage or input). */
export class DictionaryRefused extends CommandRefusal {}
