/**
 * What the binder reads off date and time literals themselves: their parts (`year(2024-05-01T00:00:00Z)`, read
 * in the literal's own offset) and whether they carry digits finer than the millisecond that is stored.
 */
import { Errors } from '../errors/catalogue';
import type { LiteralNode } from './ast';
import type { DatePartFunction } from './bound';

const LITERAL_PARTS = /^(?:(-?\d{4,})-(\d{2})-(\d{2}))?(?:T?(\d{2}):(\d{2})(?::(\d{2}))?)?/i;

export function datePartOfLiteral(name: string, node: LiteralNode): number {
  const text = String(node.value);
  const m = LITERAL_PARTS.exec(node.type === 'timeOfDay' ? `T${text}` : text)!;
  const index = { year: 1, month: 2, day: 3, hour: 4, minute: 5, second: 6 }[name as DatePartFunction];
  const part = m[index];
  if (part === undefined) {
    if (node.type === 'date' && index > 3) throw Errors.DatePartInapplicable(name, 'a date');
    if (node.type === 'timeOfDay' && index <= 3) throw Errors.DatePartInapplicable(name, 'a time of day');
    return 0;
  }
  return Number(part);
}

export function hasSubMillisecond(node: LiteralNode): boolean {
  if (typeof node.value !== 'string') return false;
  const m = /T\d{2}:\d{2}:\d{2}\.(\d+)/i.exec(node.value);
  return !!m && m[1].length > 3 && /[1-9]/.test(m[1].slice(3));
}
