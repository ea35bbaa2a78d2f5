import { randomUUID } from 'node:crypto';
import { errorMessage } from '@streamgate/ingest-core';
import type {
  AdapterRun,
  CoreLog,
  IngestError,
  Lease,
  LeaseStore,
  RunContext,
  RunEnd,
  StreamWriter,
  UpstreamAdapter,
} from '@streamgate/ingest-core';
import { appKeyRefusedMessage } from './FeedError.js';
import { SymbolWriter } from './SymbolWriter.js';
import type { SymbolWriterEvents } from './SymbolWriter.js';
import type { VenueFeed } from './VenueFeed.js';
import type { VenueNotice } from './VenueNotice.js';
import type { VenueView } from './VenueView.js';
import type { VenuePayload } from './venueSchemas.js';

export interface VenueAdapterOptions {
  readonly venue: string;
  /** Symbol streams are `<streamPrefix><SYMBOL>`; every kind of a symbol shares its stream. */
  readonly streamPrefix: string;
  /** Notices go here; its lease is also the venue lease (one session owner per app key, fleet-wide). */
  readonly controlStream: string;
  readonly workerId: string;
  readonly leases: LeaseStore;
  readonly writer: StreamWriter;
  readonly leaseTtlMs: number;
  readonly maxBuffer: number;
  readonly createFeed: (hooks: { onPayload: (p: VenuePayload) => void; onNotice: (n: VenueNotice) => void }) => VenueFeed;
  readonly log: CoreLog;
  readonly events?: SymbolWriterEvents & { noticeWriteFailed?(): void };
}

interface SymbolRun {
  readonly symbol: string;
  readonly writer: SymbolWriter;
  readonly finished: boolean;
  finish(end: RunEnd): void;
}

/**
 * The venue as an ingest upstream: one key per symbol, all of them served by one feed. A venue
 * caps sessions per app key, so per-symbol leases alone could let two workers open ten sessions
 * between them; the feed therefore runs only on the worker holding the venue lease (the control
 * stream's), and a symbol taken elsewhere fails retryably until the lease holder takes it.
 */
export class VenueAdapter implements UpstreamAdapter {
  readonly kind = 'venue';
  private readonly runs = new Map<string, SymbolRun>();
  private feed: VenueFeed | undefined;
  private lease: Lease | undefined;
  private opening: Promise<VenueFeed | undefined> | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private notices: Promise<void> = Promise.resolve();
  private stopping: Promise<void> | undefined;
  /**
   * The venue refused the app key. The key comes from the topology, read once at start, so this
   * holds for the process's life: a later run fails at once instead of opening sessions and
   * asking the venue again, which would be the endless retry under another name.
   */
  private refusal: Extract<IngestError, { code: 'upstream_refused' }> | undefined;

  constructor(private readonly options: VenueAdapterOptions) {}

  /** The running feed on this worker, if it holds the venue. */
  get activeFeed(): VenueFeed | undefined {
    return this.feed;
  }

  /** This worker holds the venue lease (the control stream's), which the worker's own leases do not include. */
  get leaseHeld(): boolean {
    return this.lease !== undefined;
  }

  /** Sessions and coverage while this worker runs the feed, else null (another worker holds the venue). */
  view(): VenueView | null {
    const feed = this.feed;
    if (feed === undefined) return null;
    const sessions = feed.status().shards.map((sh) => ({ id: sh.sessionId, symbols: sh.confirmed, connected: sh.connected }));
    return { venue: this.options.venue, sessions, ...feed.coverageCounts() };
  }

  start(ctx: RunContext): AdapterRun {
    const symbol = ctx.key.slice(this.options.streamPrefix.length);
    let resolveEnded!: (end: RunEnd) => void;
    const ended = new Promise<RunEnd>((resolve) => (resolveEnded = resolve));
    let finished = false;
    const run: SymbolRun = {
      symbol,
      writer: new SymbolWriter(ctx, this.options.maxBuffer, (end) => run.finish(end), {
        ...this.options.events,
        sequenceRestart: (stream, restart) => {
          this.options.events?.sequenceRestart?.(stream, restart);
          this.options.log.warn(
            { venue: this.options.venue, symbol, ...restart },
            'venue sequence restarted: later prints get new dedupe ids (they were dropped as duplicates otherwise)',
          );
          this.writeNotice({ type: 'sequence_restart', symbol, ...restart });
        },
      }),
      get finished() {
        return finished;
      },
      finish: (end) => {
        if (finished) return;
        finished = true;
        run.writer.stop();
        if (this.runs.get(symbol) === run) this.runs.delete(symbol);
        void this.release(symbol);
        resolveEnded(end);
      },
    };
    void this.begin(run, ctx.signal);
    return {
      stop: async () => {
        run.finish({ reason: 'stopped' });
        await ended;
      },
      ended,
    };
  }

  async close(): Promise<void> {
    for (const run of [...this.runs.values()]) run.finish({ reason: 'stopped' });
    await this.shutdown();
  }

  private async begin(run: SymbolRun, signal: AbortSignal): Promise<void> {
    if (this.refusal !== undefined) return run.finish({ reason: 'failed', error: this.refusal });
    const feed = await this.ensureFeed().catch((error: unknown) => {
      this.options.log.warn({ venue: this.options.venue, err: errorMessage(error) }, 'venue lease unavailable');
      return undefined;
    });
    if (signal.aborted || run.finished) {
      run.finish({ reason: 'stopped' });
      // Stopped while the feed was opening: its release found no feed then, so it runs now, or
      // a feed and the venue lease would stay with no symbol left to close them.
      if (feed !== undefined) await this.release(run.symbol);
      return;
    }
    if (feed === undefined) {
      // Try again about when a dead holder's lease would have lapsed, at a steady pace: a growing
      // backoff here would make the eventual take-over wait up to the worker's 30 s cap.
      const retryAfterMs = Math.round((this.options.leaseTtlMs / 3) * (0.5 + Math.random()));
      return run.finish({
        reason: 'failed',
        error: {
          code: 'upstream_unavailable',
          retryable: true,
          message: `venue ${this.options.venue} is served by another worker (its session lease is held)`,
        },
        retryAfterMs,
      });
    }
    // The new run takes the symbol before the old one finishes, so the old one's release sees it
    // still wanted and does not unsubscribe it at the venue only to subscribe it again.
    const previous = this.runs.get(run.symbol);
    this.runs.set(run.symbol, run);
    previous?.finish({ reason: 'stopped' });
    const answer = await feed.subscribe([run.symbol]);
    if (!answer.ok && answer.error.code === 'app_key_refused') {
      return run.finish({ reason: 'failed', error: this.refuseKey(answer.error.message) });
    }
    if (!answer.ok && answer.error.code === 'closed') {
      return run.finish({
        reason: 'failed',
        error: { code: 'upstream_unavailable', retryable: true, message: 'the venue feed closed while subscribing' },
      });
    }
    if (!answer.ok)
      this.options.log.warn({ venue: this.options.venue, symbol: run.symbol, error: answer.error }, 'venue subscribe not confirmed yet');
  }

  private ensureFeed(): Promise<VenueFeed | undefined> {
    if (this.feed !== undefined) return Promise.resolve(this.feed);
    this.opening ??= (async () => {
      const { leases, controlStream, workerId, leaseTtlMs } = this.options;
      const lease = await leases.acquire(controlStream, workerId, leaseTtlMs);
      if (lease === null) return undefined;
      this.lease = lease;
      const feed = this.options.createFeed({
        onPayload: (p) => this.runs.get(p.symbol)?.writer.push(p),
        onNotice: (n) => {
          this.writeNotice(n);
          if (n.type === 'app_key_refused') {
            this.refuseKey(appKeyRefusedMessage(this.options.venue, n.reason));
          }
        },
      });
      feed.start();
      this.feed = feed;
      this.renewTimer = setInterval(() => void this.renew(), Math.max(100, Math.floor(leaseTtlMs / 3)));
      this.options.log.info({ venue: this.options.venue, token: lease.token }, 'venue lease acquired; feed started');
      return feed;
    })().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async renew(): Promise<void> {
    const lease = this.lease;
    if (lease === undefined) return;
    const kept = await this.options.leases.renew(lease, this.options.workerId, this.options.leaseTtlMs).catch((error: unknown) => {
      this.options.log.warn({ venue: this.options.venue, err: errorMessage(error) }, 'venue lease renewal failed');
      return false;
    });
    if (kept || this.lease !== lease) return;
    // Another worker may now open sessions under the same key: ours must go before it does.
    this.options.log.error({ venue: this.options.venue }, 'venue lease lost; closing the feed');
    for (const run of [...this.runs.values()]) {
      run.finish({ reason: 'failed', error: { code: 'upstream_unavailable', retryable: true, message: 'venue lease lost' } });
    }
    await this.shutdown();
  }

  private async release(symbol: string): Promise<void> {
    if (this.runs.has(symbol)) return;
    const feed = this.feed;
    if (feed === undefined) return;
    const answer = await feed.unsubscribe([symbol]);
    if (!answer.ok && answer.error.code !== 'closed' && answer.error.code !== 'app_key_refused')
      this.options.log.warn({ venue: this.options.venue, symbol, error: answer.error }, 'venue unsubscribe not confirmed yet');
    if (this.runs.size === 0 && this.feed === feed) await this.shutdown();
  }

  /**
   * One shutdown at a time, and every caller waits for it: the last symbol's release may have
   * started one already, and close() returning before its lease release reached Redis lets the
   * process exit with the venue lease still held — the next worker then waits out its TTL.
   */
  private shutdown(): Promise<void> {
    this.stopping ??= this.stopFeed().finally(() => {
      this.stopping = undefined;
    });
    return this.stopping;
  }

  private async stopFeed(): Promise<void> {
    clearInterval(this.renewTimer);
    const feed = this.feed;
    const lease = this.lease;
    this.feed = undefined;
    this.lease = undefined;
    await feed?.close();
    await this.notices;
    if (lease === undefined) return;
    await this.options.leases.release(lease, this.options.workerId).catch((error: unknown) => {
      this.options.log.warn({ venue: this.options.venue, err: errorMessage(error) }, 'venue lease release failed; it expires by itself');
    });
  }

  /**
   * Ends every run with the final error (the first refusal's, whichever report came first); the
   * last run's release closes the feed and frees the venue lease. Answers the error in force.
   */
  private refuseKey(message: string): Extract<IngestError, { code: 'upstream_refused' }> {
    if (this.refusal !== undefined) return this.refusal;
    const refusal = { code: 'upstream_refused', retryable: false, message } as const;
    this.refusal = refusal;
    for (const run of [...this.runs.values()]) run.finish({ reason: 'failed', error: refusal });
    return refusal;
  }

  private writeNotice(notice: VenueNotice): void {
    const lease = this.lease;
    if (lease === undefined) return;
    const data = JSON.stringify({ ...notice, venue: this.options.venue, at: Date.now() });
    const failed = (why: string): void => {
      this.options.events?.noticeWriteFailed?.();
      this.options.log.warn({ venue: this.options.venue, notice: notice.type, err: why }, 'notice not written');
    };
    this.notices = this.notices
      .then(async () => {
        const outcome = await this.options.writer.write(
          { key: this.options.controlStream, token: lease.token },
          { entries: [{ dedupeId: randomUUID(), data }] },
        );
        if (!outcome.ok) failed(outcome.error.message);
      })
      .catch((error: unknown) => failed(errorMessage(error)));
  }
}
