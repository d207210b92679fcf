/** The operator's upstreams (`reso-server pull add|list|show|remove|pause|resume`), over reso_pulls. */
import type { Clock } from '../foundation/clock';
import type { ServiceModel } from '../model/service-model';
import type { Database } from '../storage/db/database';
import { PullProgress } from '../storage/tables/pull-progress';
import { PullRow, PullTable } from '../storage/tables/pull-table';
import { checkSettings, maskedAuth, maskedUrl, PullInvalid, PullSettings, PulledSet, rowOf, settingsOf } from './pull-settings';

/** An upstream as `list` and `show` print it: secrets masked. */
export interface UpstreamStatus {
  readonly name: string;
  readonly url: string;
  readonly auth: Record<string, string>;
  readonly sets: readonly PulledSet[];
  readonly pageSize: number;
  readonly requestsPerSecond: number;
  readonly overlapSeconds: number;
  readonly strategy: PullSettings['strategy'];
  readonly state: PullRow['state'];
  readonly lastError: string | null;
  /** Seconds since a walk last reached the upstream's end; null before the first. */
  readonly lagSeconds: number | null;
  /** When a walk last reached the upstream's end (ISO 8601); null before the first. */
  readonly lastSuccess: string | null;
  readonly recordsPulled: number;
  /** Upstream faults seen, by kind (retried ones included). */
  readonly faults: Readonly<Record<string, number>>;
  /** The puller holding the lease now, if any. */
  readonly puller: string | null;
  readonly checkpoints: readonly { set: string; strategy: string; position: string; updatedAt: string }[];
}

/** The upstreams kept in `db`. */
export function upstreamsOver(db: Database, model: ServiceModel, clock: Clock): Upstreams {
  return new Upstreams(new PullTable(db), new PullProgress(db), model, clock);
}

export class Upstreams {
  constructor(
    private readonly table: PullTable, private readonly progress: PullProgress, private readonly model: ServiceModel, private readonly clock: Clock,
  ) {}

  async add(settings: PullSettings): Promise<UpstreamStatus> {
    checkSettings(settings, this.model);
    if (!(await this.table.insert(rowOf(settings, new Date(this.clock.now()).toISOString())))) {
      throw new PullInvalid(`an upstream named ${settings.name} exists (see pull list)`);
    }
    return this.show(settings.name);
  }

  async list(): Promise<UpstreamStatus[]> {
    return Promise.all((await this.table.list()).map((row) => this.statusOf(row)));
  }

  async show(name: string): Promise<UpstreamStatus> {
    return this.statusOf(await this.row(name));
  }

  async remove(name: string): Promise<void> {
    await this.row(name);
    await this.table.remove(name);
    await this.progress.forget(name);
  }

  /** A paused upstream is left alone by its puller (which waits) until resumed. */
  async pause(name: string): Promise<void> {
    await this.row(name);
    await this.table.update(name, { state: 'paused' });
  }

  /** Active again, the last error forgotten (a stopped upstream after its credentials were corrected). */
  async resume(name: string): Promise<void> {
    await this.row(name);
    await this.table.update(name, { state: 'active', last_error: null });
  }

  /**
   * The first upstream not paused whose lag (as the metric reports it) is over `maxLagSeconds`, or that no pull has
   * yet brought to its end (a copy still incomplete); undefined when every one is within it. A stopped upstream
   * counts: its copy falls behind all the same.
   */
  async lagging(maxLagSeconds: number): Promise<{ name: string; lagSeconds: number | null } | undefined> {
    const now = this.clock.now();
    for (const row of await this.table.list()) {
      const lag = lagSeconds(row, now);
      if (row.state !== 'paused' && (lag === null || lag > maxLagSeconds)) return { name: row.name, lagSeconds: lag };
    }
    return undefined;
  }

  private async row(name: string): Promise<PullRow> {
    const row = await this.table.get(name);
    if (!row) throw new PullInvalid(`no upstream named ${name} (see pull list)`);
    return row;
  }

  private async statusOf(row: PullRow): Promise<UpstreamStatus> {
    const s = settingsOf(row);
    const now = this.clock.now();
    return {
      name: s.name, url: maskedUrl(s.baseUrl), auth: maskedAuth(s.auth), sets: s.sets, pageSize: s.pageSize, requestsPerSecond: s.requestsPerSecond,
      overlapSeconds: s.overlapSeconds, strategy: s.strategy, state: row.state, lastError: row.last_error,
      lagSeconds: lagSeconds(row, now), lastSuccess: row.caught_up_at === null ? null : new Date(row.caught_up_at).toISOString(),
      recordsPulled: row.records_pulled, faults: JSON.parse(row.faults) as Record<string, number>, puller: row.lease_until !== null && row.lease_until >= now ? row.lease_owner : null,
      checkpoints: await this.progress.checkpoints(s.name),
    };
  }
}

/** Seconds since a pull of the upstream last reached its end, at `now`; null before the first. */
function lagSeconds(row: PullRow, now: number): number | null {
  return row.caught_up_at === null ? null : Math.max(0, Math.round((now - row.caught_up_at) / 1000));
}
