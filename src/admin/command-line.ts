/**
 * Reading a command's arguments: node's own `util.parseArgs` in strict mode (no dependency: it refuses unknown
 * options, options without their value and stray positionals, which is all a handful of flat commands needs; the
 * help texts are written per command in help.ts). Every failure is an OperatorError (exit code 2) naming the
 * command and pointing at its `--help`.
 */
import { parseArgs } from 'node:util';
import { ExitCode, OperatorError } from '../exit-codes';

export type OptionKinds = Record<string, { type: 'string' | 'boolean'; short?: string }>;

export interface CommandArgs {
  readonly values: Record<string, string | boolean | undefined>;
  readonly positionals: string[];
}

/** `--help` asked for; the caller prints the command's help. */
export const HELP = Symbol('help');

/**
 * The options and positionals of `command` (e.g. "usage" or "clients add"), with `positionals` the names of the
 * ones it takes (`required`: how many of them must be given; all, unless it says fewer).
 */
export function parseCommand(
  command: string, args: readonly string[], options: OptionKinds, positionals: { names: readonly string[]; required?: number } = { names: [] },
): CommandArgs | typeof HELP {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...args], options: { ...options, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true });
  } catch (e) {
    throw usageError(command, parseArgsMessage(e as Error & { code?: string }));
  }
  if (parsed.values.help) return HELP;
  const required = positionals.required ?? positionals.names.length;
  if (parsed.positionals.length > positionals.names.length) {
    throw usageError(command, `unexpected argument ${parsed.positionals[positionals.names.length]}`);
  }
  if (parsed.positionals.length < required) throw usageError(command, `missing ${positionals.names.slice(parsed.positionals.length, required).join(' and ')}`);
  return { values: parsed.values as CommandArgs['values'], positionals: parsed.positionals };
}

/** `command` empty: the command line as a whole. */
export function usageError(command: string, problem: string): OperatorError {
  return new OperatorError(`${command ? `${command}: ` : ''}${problem} (see reso-server ${command ? `${command} ` : ''}--help)`, ExitCode.usage);
}

/** parseArgs's messages, shortened to the problem and the option. */
function parseArgsMessage(e: Error & { code?: string }): string {
  const option = /'(-[^' ]*)/.exec(e.message)?.[1];
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': return `unknown option ${option}`;
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE': return /argument missing/.test(e.message) ? `${option} needs a value` : `${option} takes no value`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL': return `unexpected argument ${/'([^']*)'/.exec(e.message)?.[1]}`;
    default: return e.message;
  }
}

export const text = (v: string | boolean | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

/** A whole number from `min`, or undefined when the option is absent. */
export function integerOption(command: string, name: string, v: string | boolean | undefined, min = 1): number | undefined {
  if (v === undefined) return undefined;
  const n = typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : NaN;
  if (!Number.isSafeInteger(n) || n < min) throw usageError(command, `--${name} needs a whole number of at least ${min} (got "${String(v)}")`);
  return n;
}

/** One of `choices`, or `fallback` when absent. */
export function choiceOption<T extends string>(command: string, name: string, v: string | boolean | undefined, choices: readonly T[], fallback: T): T {
  if (v === undefined) return fallback;
  if (typeof v === 'string' && (choices as readonly string[]).includes(v)) return v as T;
  throw usageError(command, `--${name} must be ${choices.join(' or ')} (got "${String(v)}")`);
}

const HOUR = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2})(?::00(?::00)?)?Z?)?$/;

/**
 * A UTC hour as the usage table keys it (YYYY-MM-DDTHH) from `YYYY-MM-DD` or `YYYY-MM-DDTHH` (minutes, if given,
 * :00): a date alone is its first hour for `from`, its last for `to`. Anything else, or a day the calendar does
 * not have (2026-13-45, 2026-02-30), is refused.
 */
export function hourOption(command: string, name: 'from' | 'to', v: string | boolean | undefined): string | undefined {
  if (v === undefined) return undefined;
  const m = typeof v === 'string' ? HOUR.exec(v.trim()) : null;
  const refuse = () => usageError(command, `--${name} needs a UTC date YYYY-MM-DD or hour YYYY-MM-DDTHH, e.g. 2026-11-01 or 2026-11-01T13 (got "${String(v)}")`);
  if (!m) throw refuse();
  const [, y, mo, d, h] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h ?? 0)));
  const real = date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(mo) - 1 && date.getUTCDate() === Number(d)
    && (h === undefined || Number(h) < 24);
  if (!real) throw refuse();
  return `${y}-${mo}-${d}T${h ?? (name === 'from' ? '00' : '23')}`;
}
