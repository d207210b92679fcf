/**
 * What the command line shares, on commander: each command's options are declared with their checks (the value
 * parsers below, given to `argParser`, refuse a bad value with InvalidArgumentError), and every refusal becomes
 * one line naming the command and its `--help`, with exit code 2 (docs/command-line.md "Exit codes").
 */
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import type { Config } from '../config/config';
import { ExitCode, OperatorError } from '../errors/operator-error';
import type { ListingService } from '../process/service';

/** What the commands run in: configuration and the service are opened only by the actions that need them. */
export interface CommandEnvironment {
  readonly log: (line: string) => void;
  config(): Config;
  /**
   * The service as configured, its start-up work done (unless `prepare` is false: `migrate --dry-run` looks
   * before anything is changed), its start-up lines to `log`; closed when `work` is done.
   */
  withService(work: (service: ListingService) => Promise<number>, options?: ServiceOpening): Promise<number>;
}

export interface ServiceOpening {
  readonly prepare?: boolean;
  /** Where the start-up work says what it did (migrations applied, records converted). */
  readonly log?: (line: string) => void;
}

/** What a command's action may use. */
export interface CommandContext extends CommandEnvironment {
  /** Runs the command's work and keeps its exit code for the command line to return. */
  run(work: () => Promise<number>): Promise<void>;
}

/** A parser for a whole number from `min`. */
export function wholeNumber(min = 1): (value: string) => number {
  return (value) => {
    const n = /^\d+$/.test(value.trim()) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min) throw new InvalidArgumentError(`Expected a whole number of at least ${min}.`);
    return n;
  };
}

/**
 * A parser for an option that names several things and may be repeated: `--hide A,B --hide C` is [A, B, C]
 * (commander hands each occurrence its value and what the ones before made).
 */
export function repeatableList(): (value: string, previous: string[] | undefined) => string[] {
  return (value, previous) => [...(previous ?? []), ...value.split(',').map((item) => item.trim()).filter(Boolean)];
}

const HOUR = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2})(?::00(?::00)?)?Z?)?$/;

/**
 * A UTC hour as the usage table keys it (YYYY-MM-DDTHH) from `YYYY-MM-DD` or `YYYY-MM-DDTHH` (minutes, if given,
 * :00): a date alone is its first hour for `from`, its last for `to`. Undefined for anything else, or a day the
 * calendar does not have (2026-13-45, 2026-02-30).
 */
export function hourOf(value: string, end: 'from' | 'to'): string | undefined {
  const m = HOUR.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h] = m;
  const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h ?? 0)));
  const real = date.getUTCFullYear() === Number(y) && date.getUTCMonth() === Number(mo) - 1 && date.getUTCDate() === Number(d)
    && (h === undefined || Number(h) < 24);
  return real ? `${y}-${mo}-${d}T${h ?? (end === 'from' ? '00' : '23')}` : undefined;
}

/** A parser for `--from` or `--to` (see hourOf). */
export function utcHour(end: 'from' | 'to'): (value: string) => string {
  return (value) => {
    const hour = hourOf(value, end);
    if (hour === undefined) throw new InvalidArgumentError('Expected a UTC date YYYY-MM-DD or hour YYYY-MM-DDTHH on the calendar, e.g. 2026-11-01 or 2026-11-01T13.');
    return hour;
  };
}

/** "clients add" for that command; empty for the program itself. */
function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c?.parent; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** A refusal of what the operator typed, in the words of every other one: the command, the problem, its help. */
export function usageError(command: Command, problem: string): OperatorError {
  const path = pathOf(command);
  return new OperatorError(`${path ? `${path}: ` : ''}${problem} (see reso-server ${path ? `${path} ` : ''}--help)`, ExitCode.usage);
}

/**
 * Makes `program` and all its commands throw instead of exiting: a refusal as one usageError line (commander
 * prints nothing itself), help and version as the CommanderError that `exitCodeOf` reads.
 */
export function throwInsteadOfExiting(program: Command): void {
  program.configureOutput({ outputError: () => undefined });
  program.exitOverride((e) => {
    if (e.code === 'commander.help' || e.code === 'commander.helpDisplayed' || e.code === 'commander.version') throw e;
    // One line: commander puts its "Did you mean …?" on a line of its own.
    throw usageError(program, e.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' '));
  });
  for (const command of program.commands) throwInsteadOfExiting(command);
}

/** The exit code of help or the version, which commander has printed; undefined for any other failure. */
export function exitCodeOf(e: unknown): number | undefined {
  if (!(e instanceof CommanderError)) return undefined;
  // Help printed because a command was missing went to stderr: a usage error too.
  return e.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
}
