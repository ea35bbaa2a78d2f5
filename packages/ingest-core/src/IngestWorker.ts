import { backoffDelay } from '@streamgate/protocol';
import type { CoreLog } from './CoreLog.js';
import type { DemandSource } from '@streamgate/demand';
import { errorMessage } from './IngestError.js';
import type { Lease, LeaseStore } from './LeaseStore.js';
import type { StreamWriter, WriteBatch, WriteOutcome } from './StreamWriter.js';
import type { AdapterRun, RunEnd, UpstreamAdapter } from './UpstreamAdapter.js';

export type LeaseChange = 'acquired' | 'renew_lost' | 'released' | 'fenced';

/** Hooks for metrics; every one is optional. */
export interface WorkerEvents {
  leaseChanged?(key: string, change: LeaseChange): void;
  runEnded?(key: string, end: RunEnd): void;
  demandError?(error: unknown): void;
  writeOutcome?(key: string, outcome: WriteOutcome): void;
}

export interface IngestWorkerOptions {
  readonly workerId: string;
  /** Keys this worker may serve (the configured streams) and the adapter for each. */
  readonly adapters: ReadonlyMap<string, UpstreamAdapter>;
  readonly demand: DemandSource;
  readonly leases: LeaseStore;
  readonly writer: StreamWriter;
  readonly leaseTtlMs: number;
  /** How often demand is read and leases renewed; must be well under leaseTtlMs. */
  readonly tickMs: number;
  /** How long an owned key keeps its upstream subscription after demand ends. */
  readonly graceMs: number;
  readonly log: CoreLog;
  readonly events?: WorkerEvents;
  readonly now?: () => number;
}

interface Owned {
  lease: Lease;
  run: AdapterRun;
  abort: AbortController;
  ended: boolean;
  /** A write was refused as fenced: the run ends fenced, whatever end the adapter reports for the abort. */
  fenced: boolean;
}

/**
 * The fleet-wide coordinator of one worker process: while a key is demanded, some worker holds
 * its lease and runs its adapter; the holder renews every tick and stops (releasing the lease) a
 * grace period after demand ends, or at once when it loses the lease.
 */
export class IngestWorker {
  private readonly owned = new Map<string, Owned>();
  private readonly lastDemandAt = new Map<string, number>();
  /** Key → earliest time a failed run may be restarted, and how many failures in a row. */
  private readonly retry = new Map<string, { at: number; attempt: number }>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: IngestWorkerOptions) {
    this.now = options.now ?? Date.now;
  }

  get ownedKeys(): string[] {
    return [...this.owned.keys()];
  }

  start(): void {
    const loop = (): void => {
      if (this.closed) return;
      this.ticking = this.tick().finally(() => {
        if (!this.closed) this.timer = setTimeout(loop, this.options.tickMs);
      });
    };
    loop();
  }

  /** One pass: read demand, renew or give up what is owned, try to take what is wanted. */
  async tick(): Promise<void> {
    const { adapters, log } = this.options;
    const now = this.now();
    try {
      const demanded = await this.options.demand.demanded();
      for (const key of demanded) if (adapters.has(key)) this.lastDemandAt.set(key, now);
    } catch (error) {
      // Demand unknown: keep what is owned (renewal still decides) and take nothing new.
      this.options.events?.demandError?.(error);
      log.warn({ err: errorMessage(error) }, 'demand read failed');
    }
    // Renewals first, all at once: a lease taken early in a long pass of acquisitions must not
    // wait behind them for its renewal (30 keys taken one by one under load outlived a 1.5 s TTL).
    const keep: Promise<void>[] = [];
    for (const [key, owned] of this.owned) {
      const last = this.lastDemandAt.get(key);
      const wanted = last !== undefined && now - last <= this.options.graceMs;
      keep.push(
        (async () => {
          if (!wanted) await this.giveUp(key, owned, 'released');
          else if (!(await this.options.leases.renew(owned.lease, this.options.workerId, this.options.leaseTtlMs))) {
            await this.giveUp(key, owned, 'renew_lost');
          }
        })().catch((error: unknown) => log.warn({ key, err: errorMessage(error) }, 'lease operation failed')),
      );
    }
    await Promise.all(keep);
    for (const key of adapters.keys()) {
      if (this.closed) return;
      if (this.owned.has(key) || this.lastDemandAt.get(key) !== now) continue;
      try {
        await this.tryTake(key);
      } catch (error) {
        log.warn({ key, err: errorMessage(error) }, 'lease operation failed');
      }
    }
  }

  private async tryTake(key: string): Promise<void> {
    const retry = this.retry.get(key);
    if (retry !== undefined && this.now() < retry.at) return;
    const adapter = this.options.adapters.get(key);
    if (adapter === undefined) return;
    const { workerId, leaseTtlMs, writer } = this.options;
    const lease = await this.options.leases.acquire(key, workerId, leaseTtlMs);
    if (lease === null) return;
    const fence = { key, token: lease.token };
    let state: Map<string, string>;
    try {
      state = await writer.loadState(fence);
    } catch (error) {
      await this.options.leases.release(lease, workerId);
      // As a failed run: without a backoff every tick would take and give back the lease (a new
      // fencing token each time) and log the same failure.
      const attempt = (this.retry.get(key)?.attempt ?? 0) + 1;
      this.retry.set(key, { at: this.now() + backoffDelay(attempt, 500, 30_000), attempt });
      throw error;
    }
    this.options.events?.leaseChanged?.(key, 'acquired');
    this.options.log.info({ key, token: lease.token, worker: workerId }, 'lease acquired');
    const abort = new AbortController();
    const write = async (batch: WriteBatch): Promise<WriteOutcome> => {
      if (abort.signal.aborted) {
        return { ok: false, error: { code: 'stopped', retryable: false, message: 'the run was stopped' } };
      }
      const outcome = await writer.write(fence, batch);
      this.options.events?.writeOutcome?.(key, outcome);
      if (!outcome.ok && outcome.error.code === 'fenced') {
        // Logged here: the run may end as `stopped` or not be reported at all once the lease is given up.
        this.options.log.warn({ key, token: lease.token, err: outcome.error.message }, 'write fenced: a newer owner holds the stream');
        entry.fenced = true;
        abort.abort();
      }
      return outcome;
    };
    const run = adapter.start({ key, state, write, signal: abort.signal });
    const entry: Owned = { lease, run, abort, ended: false, fenced: false };
    this.owned.set(key, entry);
    void run.ended.then((end) => this.onEnded(key, entry, end));
  }

  private async onEnded(key: string, entry: Owned, reported: RunEnd): Promise<void> {
    entry.ended = true;
    // An adapter may end on the abort that follows a fenced write before it sees the refusal
    // itself (the EVM run stops on abort): the run was still fenced, and its lease is not ours.
    const end: RunEnd = entry.fenced ? { reason: 'fenced' } : reported;
    this.options.events?.runEnded?.(key, end);
    if (this.owned.get(key) !== entry) return;
    this.owned.delete(key);
    const { log, workerId } = this.options;
    log.info({ key, end }, 'run ended');
    if (end.reason === 'fenced') {
      this.options.events?.leaseChanged?.(key, 'fenced');
      return;
    }
    if (end.reason === 'failed' && end.retryAfterMs !== undefined) {
      // The adapter knows when trying again makes sense (e.g. another worker serves the upstream
      // until its lease lapses): no growing backoff, which would slow the eventual take-over.
      this.retry.set(key, { at: this.now() + end.retryAfterMs, attempt: this.retry.get(key)?.attempt ?? 0 });
    } else if (end.reason === 'failed') {
      const attempt = (this.retry.get(key)?.attempt ?? 0) + 1;
      this.retry.set(key, { at: this.now() + backoffDelay(attempt, 500, 30_000), attempt });
    } else {
      this.retry.delete(key);
    }
    // A halted run keeps its lease so no other worker restarts the key behind the operator's back.
    if (end.reason === 'halted') {
      this.owned.set(key, entry);
      return;
    }
    try {
      await this.options.leases.release(entry.lease, workerId);
      this.options.events?.leaseChanged?.(key, 'released');
    } catch (error) {
      log.warn({ key, err: errorMessage(error) }, 'lease release failed; it expires by itself');
    }
  }

  private async giveUp(key: string, owned: Owned, change: 'released' | 'renew_lost', shuttingDown = false): Promise<void> {
    this.owned.delete(key);
    owned.abort.abort();
    await owned.run.stop();
    const said = change === 'renew_lost' ? 'lease lost' : shuttingDown ? 'shutting down; lease released' : 'demand ended; lease released';
    this.options.log.info({ key, change }, said);
    this.options.events?.leaseChanged?.(key, change);
    if (change === 'released') await this.options.leases.release(owned.lease, this.options.workerId);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.ticking;
    for (const [key, owned] of [...this.owned]) {
      try {
        await this.giveUp(key, owned, 'released', true);
      } catch (error) {
        this.options.log.warn({ key, err: errorMessage(error) }, 'release on close failed');
      }
    }
  }
}
