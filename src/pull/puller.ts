/**
 * `reso-server pull run <name>`: one upstream replicated into the store, once or following it. One puller is
 * active per upstream, by the lease in its row (storage/tables/pull-table.ts): another one waits, and takes over
 * when the lease expires. A pass walks each set by its timestamp, then reconciles removals when they are due.
 * A refused credential stops the upstream (state stopped, one line) until the operator resumes it; any other fault
 * ends the pass with one line, the checkpoint where the last written page left it.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../foundation/clock';
import { entitySetOf, IngestTarget } from '../ingest/ingest';
import type { PullProgress } from '../storage/tables/pull-progress';
import type { PullRow, PullTable } from '../storage/tables/pull-table';
import { PageNotWritten, PageWriter } from './page-writer';
import type { PullContext, SetPull } from './pull-context';
import { PullFailed, PullInvalid, PullSettings, settingsOf } from './pull-settings';
import { RECONCILED_STRATEGY, reconcile, SelectKeyWalk } from './reconcile';
import { declaresDigest, DigestSearch } from './digest-search';
import { TimestampWalk } from './timestamp-walk';
import { EventFollow, eventSetOf, offersEvents } from './event-follow';
import type { EntitySetSpec } from '../model/service-model';
import { Upstream, UpstreamFault } from './upstream';

export interface PullerOptions {
  /** How long a claim on an upstream holds; renewed as the puller works (at a third of it). */
  readonly leaseMs: number;
  /** Between passes when following, and between looks at a lease another puller holds. */
  readonly intervalMs: number;
  /** Removals are reconciled at most this often per set (0: every pass). */
  readonly reconcileEveryMs: number;
  readonly clock: Clock;
  readonly log: (line: string) => void;
  /** The upstream's client; it reports every fault it meets (retried or not) to `onFault`. */
  readonly connect: (settings: PullSettings, onFault: (kind: string) => void) => Upstream;
}

/** How a one-shot run ended. */
export interface PassOutcome {
  readonly written: number;
  readonly removed: number;
}

/** The pass gave up its upstream: the lease went to another puller, or the process is stopping. */
class PassAbandoned extends Error {}

export class Puller {
  readonly owner = `${hostname()} pid ${process.pid} ${randomBytes(4).toString('hex')}`;
  private stopping = false;
  private wake?: () => void;

  constructor(private readonly table: PullTable, private readonly progress: PullProgress, private readonly target: IngestTarget, private readonly options: PullerOptions) {}

  /** SIGTERM: the page in hand is finished (a page is written whole or not at all), the lease given up. */
  stop(): void {
    this.stopping = true;
    this.wake?.();
  }

  /** Pulls `name` once (waiting up to two leases for another puller's), or until stopped when `follow`ing. */
  async run(name: string, follow: boolean): Promise<PassOutcome> {
    const total = { written: 0, removed: 0 };
    const waitingSince = this.options.clock.now();
    let said = '';
    try {
      while (!this.stopping) {
        const row = await this.table.get(name);
        if (!row) throw new PullInvalid(`no upstream named ${name} (see pull list)`);
        const held = row.state !== 'active' ? `upstream ${name} is ${row.state}${row.last_error ? ` (${row.last_error})` : ''}; pull resume ${name} to go on`
          : await this.claim(name) ? undefined : `upstream ${name} is pulled by ${row.lease_owner}; waiting for its lease`;
        if (held) {
          if (!follow && (row.state !== 'active' || this.options.clock.now() - waitingSince > 2 * this.options.leaseMs)) throw new PullFailed(held);
          if (held !== said) this.options.log(`pull ${name}: ${(said = held)}`);
          // Another puller's lease is looked at again as it expires, not an interval later.
          const expires = row.state === 'active' && row.lease_until !== null ? row.lease_until - this.options.clock.now() + 50 : Infinity;
          await this.pause(Math.max(50, Math.min(this.options.intervalMs, expires)));
          continue;
        }
        said = '';
        const outcome = await this.pass(row, follow);
        total.written += outcome.written;
        total.removed += outcome.removed;
        if (!follow) return total;
        await this.pause(this.options.intervalMs);
      }
      return total;
    } finally {
      await this.table.release(name, this.owner);
    }
  }

  private async claim(name: string): Promise<boolean> {
    const now = this.options.clock.now();
    return (await this.table.claim(name, this.owner, now, now + this.options.leaseMs)) !== undefined;
  }

  private async pass(row: PullRow, follow: boolean): Promise<PassOutcome> {
    const settings = settingsOf(row);
    const faults = new Map<string, number>();
    const upstream = this.options.connect(settings, (kind) => faults.set(kind, (faults.get(kind) ?? 0) + 1));
    let renewed = this.options.clock.now();
    const context: PullContext = {
      settings, upstream, progress: this.progress, log: this.options.log,
      writer: new PageWriter(this.target, this.progress, settings.name, this.options.clock),
      onWritten: (_set, count) => this.table.addPulled(settings.name, count),
      stillMine: async () => {
        if (this.stopping) throw new PassAbandoned('stopping');
        if (this.options.clock.now() - renewed < this.options.leaseMs / 3) return;
        if (!(await this.claim(settings.name))) throw new PassAbandoned('its lease went to another puller');
        renewed = this.options.clock.now();
      },
    };
    try {
      const outcome = await this.walkAll(context);
      await this.table.update(settings.name, { caught_up_at: this.options.clock.now(), last_error: null });
      return outcome;
    } catch (e) {
      return await this.failed(settings.name, e, follow);
    } finally {
      await upstream.close().catch(() => undefined);
      await this.table.addFaults(settings.name, faults);
    }
  }

  private async walkAll(context: PullContext): Promise<PassOutcome> {
    const outcome = { written: 0, removed: 0 };
    const pulls: SetPull[] = context.settings.sets.map((pulled) => ({ pulled, set: entitySetOf(this.target.model, pulled.local) }));
    const walk = new TimestampWalk(context);
    const events = await this.eventsOf(context);
    if (events) outcome.written += await new EventFollow(context, events, pulls, walk).follow();
    else for (const pull of pulls) outcome.written += await walk.walk(pull);
    const keys = new SelectKeyWalk(context);
    let digest: DigestSearch | undefined | null = null;
    for (const pull of pulls) {
      if (!(await this.reconcileDue(context, pull))) continue;
      // The digest counts the whole set the licence sees: a set pulled under a filter is walked instead.
      if (digest === null) digest = declaresDigest(await context.upstream.metadata()) ? new DigestSearch(context) : undefined;
      outcome.removed += await reconcile(context, digest && !pull.pulled.filter && pull.set.changeTimestamp ? digest : keys, pull);
      const now = new Date(this.options.clock.now()).toISOString();
      await this.target.writer.transaction((tx) => this.progress.setCheckpoint(tx.executor, context.settings.name, pull.set.name, RECONCILED_STRATEGY, now, now));
    }
    return outcome;
  }

  /** The event set to follow, when the strategy says so (auto: when the upstream declares it). */
  private async eventsOf(context: PullContext): Promise<EntitySetSpec | undefined> {
    const { strategy, name } = context.settings;
    if (strategy === 'timestamp') return undefined;
    const events = eventSetOf(this.target.model);
    if (!events) {
      if (strategy === 'events') throw new PullFailed(`upstream ${name}: the local dictionary declares no event set to follow`);
      return undefined;
    }
    return strategy === 'events' || (await offersEvents(context, events)) ? events : undefined;
  }

  private async reconcileDue(context: PullContext, pull: SetPull): Promise<boolean> {
    const last = await this.progress.checkpoint(context.settings.name, pull.set.name, RECONCILED_STRATEGY);
    return last === undefined || this.options.clock.now() - Date.parse(last) >= this.options.reconcileEveryMs;
  }

  /** One line for the fault; a refused credential stops the upstream. A one-shot run fails with it. */
  private async failed(name: string, e: unknown, follow: boolean): Promise<PassOutcome> {
    if (e instanceof PassAbandoned) {
      this.options.log(`pull ${name}: pass ended: ${e.message}`);
      return { written: 0, removed: 0 };
    }
    if (e instanceof PageNotWritten) {
      await this.table.update(name, { last_error: e.message });
      this.options.log(`pull ${name}: pass ended: ${e.message}; the checkpoint stays before that page`);
      if (!follow) throw new PullFailed(`upstream ${name}: ${e.message}`);
      return { written: 0, removed: 0 };
    }
    if (!(e instanceof UpstreamFault)) throw e;
    const stopped = e.kind === 'credentials-refused';
    const line = `${e.kind}: ${e.message}`;
    await this.table.update(name, stopped ? { state: 'stopped', last_error: line } : { last_error: line });
    this.options.log(stopped ? `pull ${name}: the upstream refused the credentials (${e.message}); stopped until pull resume ${name}`
      : `pull ${name}: pass failed: ${line}; the checkpoint stays where the last written page left it`);
    if (!follow) throw new PullFailed(stopped ? `upstream ${name} refused the credentials; stopped` : `upstream ${name}: ${line}`);
    return { written: 0, removed: 0 };
  }

  /** Waits `ms`, or less when stopped. */
  private pause(ms: number): Promise<void> {
    if (this.stopping) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void { clearTimeout(timer); resolve(); }
      this.wake = done;
    });
  }
}
