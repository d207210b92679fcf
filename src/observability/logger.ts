/**
 * The process's logger (pino): one JSON object a line for a log collector, or lines for people at a terminal
 * (`LOG_FORMAT=pretty`, the default when standard output is a terminal: pino-pretty, in process, loaded only then). Tests and embedders that pass none get a silent one.
 */
import pino, { DestinationStream, Logger } from 'pino';
import type { LogFormat, LogLevel } from '../operation-config';

export type { Logger } from 'pino';

export interface LoggerSettings {
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/** `destination`: where lines go (standard output by default; a test captures them). */
export function createLogger(settings: LoggerSettings, destination?: DestinationStream): Logger {
  const options = { level: settings.logLevel, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime };
  if (settings.logFormat === 'pretty' && !destination) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pretty = require('pino-pretty') as (o: object) => DestinationStream;
    return pino(options, pretty({ colorize: process.stdout.isTTY, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }));
  }
  return pino(options, destination ?? pino.destination({ dest: 1, sync: false }));
}

export const silentLogger: Logger = pino({ level: 'silent' });
