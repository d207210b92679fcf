/**
 * The process's logger (pino): one JSON object a line for a log collector, or lines for people at a terminal
 * (`LOG_FORMAT=pretty`, the default when standard output is a terminal: pino-pretty, in process, loaded only then). Tests and embedders that pass none get a silent one.
 */
import pino, { DestinationStream, Logger } from 'pino';
import type { LogFormat, LogLevel } from '../config/operation';
import { without } from '../foundation/bench-without';
import { standardOutput } from './standard-output';

export type { Logger } from 'pino';

export interface LoggerSettings {
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/** Each logger's twin for request lines, where it has one (JSON lines to standard output). */
const requestLoggers = new WeakMap<Logger, Logger>();

/**
 * The instant a line was logged, in ISO 8601 as pino's isoTime writes it, formatted once per millisecond: a busy
 * server logs several lines in each.
 */
let stamped = { at: NaN, text: '' };
function isoTime(): string {
  const now = Date.now();
  if (now !== stamped.at) stamped = { at: now, text: `,"time":"${new Date(now).toISOString()}"` };
  return stamped.text;
}

/** `destination`: where lines go (standard output by default; a test captures them). */
export function createLogger(settings: LoggerSettings, destination?: DestinationStream): Logger {
  const options = { level: settings.logLevel, base: { pid: process.pid }, timestamp: isoTime };
  if (settings.logFormat === 'pretty' && !destination) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as (o: object) => DestinationStream;
    return pino(options, pretty({ colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
  }
  if (destination) return pino(options, destination);
  // Bench knob: pino's own transport (its destination written by a thread of pino's, flushed at exit) in place of ours.
  if (without('log-thread')) return pino(options, pino.transport({ target: 'pino/file', options: { destination: 1 } }));
  const output = standardOutput();
  const logger = pino(options, output.immediate);
  requestLoggers.set(logger, pino(options, output.batched));
  return logger;
}

/**
 * The logger request lines go to: for JSON lines on standard output, one that holds them for a batch (they are
 * many and alike, and nobody waits on one of them); otherwise `logger` itself.
 */
export function requestLineLogger(logger: Logger): Logger {
  return requestLoggers.get(logger) ?? logger;
}

export const silentLogger: Logger = pino({ level: 'silent' });
