/**
 * The process's logger (pino): one JSON object a line for a log collector, or lines for people at a terminal
 * (`LOG_FORMAT=pretty`, the default when standard output is a terminal: pino-pretty, in process, loaded only then). Tests and embedders that pass none get a silent one.
 */
import pino, { DestinationStream, Logger } from 'pino';
import type { LogFormat, LogLevel } from '../operation-config';
import { writeAll } from '../write-all';

export type { Logger } from 'pino';

export interface LoggerSettings {
  readonly logLevel: LogLevel;
  readonly logFormat: LogFormat;
}

/**
 * Request lines go out in batches of about this many bytes, or at most LINE_DELAY_MS after they were logged. Every
 * write of standard output goes through Node's thread pool, and handing one over costs the event loop tens of µs
 * whatever its size: one write per request line cost a busy server about a tenth of its CPU, batches of 10 ms
 * still about 1% (measured on the key-fetch benchmark). A collector reads lines seconds apart; a tenth of a
 * second's delay costs it nothing.
 */
const BATCH_BYTES = 64 * 1024;
const LINE_DELAY_MS = 100;
/**
 * Lines held while standard output does not take them (a stalled log collector) are bounded: past this, new
 * lines are dropped rather than the process's memory growing with every request.
 */
const HELD_BYTES_MAX = 32 * 1024 * 1024;

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

/**
 * Standard output through pino's SonicBoom, with two ways in. Request lines are held until a batch is full or the
 * oldest is LINE_DELAY_MS old (a timer runs only while lines are held). Every other line is written at once,
 * after the request lines held before it: a line logged just before a long stretch of work (seeding, say) must
 * not wait for the event loop to be free, and the order of lines stays the order they were logged in. (Unless a
 * batch is still being written: SonicBoom queues what comes meanwhile until the event loop hears that write end.)
 * Writes stay asynchronous: a synchronous write to a collector that has stopped reading would stop the server with it.
 * What is held when the process exits, however it exits, is written synchronously after what SonicBoom still
 * has: an asynchronous write begun then would never be done.
 */
function standardOutput(): { immediate: DestinationStream; batched: DestinationStream } {
  const out = pino.destination({ dest: 1, sync: false, maxLength: HELD_BYTES_MAX });
  let held = '';
  let timer: NodeJS.Timeout | undefined;
  const take = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const batch = held;
    held = '';
    return batch;
  };
  const release = () => {
    out.write(take());
  };
  process.once('exit', () => {
    if (!held) return;
    const batch = take();
    try {
      out.flushSync();
    } catch {
      // Nothing SonicBoom can still write (closed, or standard output gone); what is held is tried all the same.
    }
    try {
      writeAll(1, Buffer.from(batch, 'utf8'));
    } catch {
      // Standard output closed (EPIPE) or not taking anything: nowhere left to write.
    }
  });
  return {
    immediate: { write: (line: string) => { out.write(held ? take() + line : line); } },
    batched: {
      write(line: string) {
        held += line;
        if (held.length >= BATCH_BYTES) release();
        else timer ??= setTimeout(release, LINE_DELAY_MS).unref();
      },
    },
  };
}

export const silentLogger: Logger = pino({ level: 'silent' });
