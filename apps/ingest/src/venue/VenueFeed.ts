import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { errorMessage } from '@streamgate/ingest-core';
import { backoffDelay } from '@streamgate/protocol';
import { CoverageMap } from './CoverageMap.js';
import { FeedCalls } from './FeedCalls.js';
import type { FeedAnswer } from './FeedError.js';
import type { VenueFeedOptions } from './VenueFeedOptions.js';
import { planShards } from './planShards.js';
import { RejectionList } from './RejectionList.js';
import { ShardReconciler } from './ShardReconciler.js';
import type { AttemptResult } from './ShardReconciler.js';
import type { VenueNotice } from './VenueNotice.js';
import { venueSymbolSchema } from './venueSchemas.js';
import type { VenueKind } from './venueSchemas.js';
import { VenueSession } from './VenueSession.js';
import { VenueShard } from './VenueShard.js';
import type { Attempt, AttemptKind } from './VenueShard.js';

/** Caller-supplied symbol lists: checked whole before anything moves. */
const symbolListSchema = z.array(venueSymbolSchema).max(10_000);

/**
 * The facade a consumer sees: ask for symbols, watch coverage. Sessions, shards, HTTP joins,
 * replays, re-asserts and refusals are all handled here, each against a way this venue fails:
 * sticky shards (moving a symbol costs an unsubscribe and a subscribe from one rate budget),
 * CONNACK before the first subscribe (the venue refuses a session id it has not yet accepted),
 * whole-list replay after any reconnect (it forgets a session's subscriptions with its
 * connection), one blind re-assert per session per tick (sessions go quiet while connected),
 * attempt tokens (a late answer or deadline must not conclude the attempt after it), and
 * acquire-not-check on the rate limiter (a throttled recovery must wait, not be dropped).
 */
export class VenueFeed {
  private readonly wanted = new Set<string>();
  private readonly shards = new Map<number, VenueShard>();
  private readonly rejected: RejectionList;
  private readonly coverage: CoverageMap;
  private readonly calls: FeedCalls;
  private unplaced = new Set<string>();
  private ceiling: number;
  private readonly reconciler: ShardReconciler;
  private tickTimer: NodeJS.Timeout | undefined;
  private coverageTimer: NodeJS.Timeout | undefined;
  private lastCoverage = '';
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: VenueFeedOptions) {
    this.now = options.now ?? Date.now;
    this.ceiling = options.maxSymbolsPerSession;
    this.rejected = new RejectionList(options.rejectedSymbolTtlMs, this.now);
    this.coverage = new CoverageMap(options.declaredKinds ?? options.kinds, options.coverageStaleMs);
    this.reconciler = new ShardReconciler(options.http, options.kinds, options.reconcileTimeoutMs, this.now, {
      concluded: (shard, attempt, result) => this.concluded(shard, attempt, result),
      staleAnswer: () => this.options.events?.staleAnswer?.(),
    });
    this.calls = new FeedCalls(
      {
        rejectedUntil: (s) => this.rejected.expiry(s),
        unplaced: (s) => this.wanted.has(s) && this.unplaced.has(s),
        // A symbol unsubscribed again before its subscribe settled is superseded, not pending.
        confirmed: (s) => !this.wanted.has(s) || (this.shardOf(s)?.confirmed.has(s) ?? false),
        held: (s) => [...this.shards.values()].some((sh) => sh.confirmed.has(s) || sh.maybe.has(s)),
        onConnectedShard: (s) => this.shardOf(s)?.connected ?? false,
      },
      Math.floor((options.callTimeoutMs * 2) / 3),
      this.now,
    );
  }

  start(): void {
    const tick = (): void => {
      if (this.closed) return;
      // Re-armed first so a throw in the body cannot stop the only recovery for quiet sessions;
      // the in-flight skip in reassert() is what bounds the work, not the timer.
      this.tickTimer = setTimeout(tick, this.options.reassertIntervalMs);
      this.tick();
    };
    this.tickTimer = setTimeout(tick, this.options.reassertIntervalMs);
    // Coverage changes are noticed within a second, not a whole re-assert interval later.
    this.coverageTimer = setInterval(() => this.reportCoverage(), Math.min(1_000, this.options.reassertIntervalMs));
  }

  subscribe(symbols: unknown): Promise<FeedAnswer> {
    return this.change(symbols, (list) => {
      for (const s of list) this.wanted.add(s);
      return { add: list, remove: [] };
    });
  }

  unsubscribe(symbols: unknown): Promise<FeedAnswer> {
    return this.change(symbols, (list) => {
      for (const s of list) this.wanted.delete(s);
      this.coverage.forget(list);
      return { add: [], remove: list };
    });
  }

  /** Replaces the whole wanted set. */
  updateSymbols(symbols: unknown): Promise<FeedAnswer> {
    return this.change(symbols, (list) => {
      const next = new Set(list);
      const remove = [...this.wanted].filter((s) => !next.has(s));
      this.wanted.clear();
      for (const s of list) this.wanted.add(s);
      this.coverage.forget(remove);
      return { add: list, remove };
    });
  }

  wantedSymbols(): string[] {
    return [...this.wanted];
  }

  coverageByKind(): Record<VenueKind, Set<string>> {
    return this.coverage.byKind(this.wanted, this.now());
  }

  /** Coverage by kind and their union, computed once. */
  coverageSnapshot(): { byKind: Record<VenueKind, Set<string>>; covered: Set<string> } {
    const now = this.now();
    const byKind = this.coverage.byKind(this.wanted, now);
    return { byKind, covered: this.coverage.covered(this.wanted, now, byKind) };
  }

  /** Wanted symbols and how many of them are covered, per declared kind and in all. */
  coverageCounts(): { wanted: number; covered: number; byKind: Partial<Record<VenueKind, number>> } {
    return { wanted: this.wanted.size, ...this.coverage.counts(this.wanted, this.now()) };
  }

  covered(): Set<string> {
    return this.coverage.covered(this.wanted, this.now());
  }

  /** Where things stand, for metrics and the query endpoint. */
  status() {
    return {
      wanted: this.wanted.size,
      covered: this.covered().size,
      ceiling: this.ceiling,
      rejected: [...this.rejected.active()],
      unplaced: [...this.unplaced],
      pendingCalls: this.calls.size,
      shards: [...this.shards.values()].map((sh) => ({
        index: sh.index,
        sessionId: sh.sessionId,
        connected: sh.connected,
        symbols: sh.symbols.length,
        confirmed: sh.confirmed.size,
        attempt: sh.attempt?.kind ?? null,
        reassertFailures: sh.reassertFailures,
      })),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.tickTimer);
    clearInterval(this.coverageTimer);
    this.calls.fail({ code: 'closed', retryable: false, message: 'the feed is closing' });
    await Promise.all([...this.shards.values()].map((sh) => this.dropShard(sh)));
  }

  private change(symbols: unknown, apply: (list: string[]) => { add: string[]; remove: string[] }): Promise<FeedAnswer> {
    if (this.closed) return Promise.resolve({ ok: false, error: { code: 'closed', retryable: false, message: 'the feed is closed' } });
    const parsed = symbolListSchema.safeParse(symbols);
    if (!parsed.success) {
      // Refused before any state moves: one bad list must not cost anyone else their symbols.
      const why = parsed.error.issues.map((i) => `${i.path.join('.') || 'symbols'}: ${i.message}`).join('; ');
      return Promise.resolve({ ok: false, error: { code: 'invalid_symbols', retryable: false, symbols, message: why } });
    }
    const { add, remove } = apply([...new Set(parsed.data)]);
    this.replan();
    return this.calls.wait(add, remove);
  }

  private shardOf(symbol: string): VenueShard | undefined {
    for (const shard of this.shards.values()) if (shard.has(symbol)) return shard;
    return undefined;
  }

  /** Sticky re-plan from the effective wanted set; only shards whose list changed are touched. */
  private replan(): void {
    if (this.closed) return;
    const eligible = [...this.wanted].filter((s) => !this.rejected.has(s));
    const plan = planShards({
      shards: [...this.shards.values()].map((sh) => ({ index: sh.index, symbols: sh.symbols, capacity: this.ceiling })),
      wanted: eligible,
      maxShards: this.options.maxSessions,
      defaultCapacity: this.ceiling,
    });
    const before = this.unplaced;
    this.unplaced = new Set(plan.unplaced);
    const newlyFull = plan.unplaced.filter((s) => !before.has(s));
    if (newlyFull.length > 0) {
      this.options.log.warn({ venue: this.options.venue, symbols: newlyFull.length, ceiling: this.ceiling }, 'venue capacity reached');
      this.notice({ type: 'capacity', symbols: newlyFull, sessions: this.options.maxSessions, ceiling: this.ceiling });
    }
    const planned = new Map(plan.shards.map((p) => [p.index, p.symbols]));
    for (const [index, symbols] of planned) {
      const shard = this.shards.get(index) ?? this.openShard(index);
      if (!sameList(shard.symbols, symbols)) {
        shard.symbols = symbols;
        this.pump(shard);
      }
    }
    for (const shard of this.shards.values()) {
      if (planned.has(shard.index) || shard.symbols.length === 0) continue;
      shard.symbols = [];
      this.pump(shard);
    }
    this.calls.settle();
  }

  private openShard(index: number): VenueShard {
    const shard = new VenueShard(index, newSessionId(this.options.venue, index), undefined as unknown as VenueSession);
    shard.session = this.newSession(shard);
    this.shards.set(index, shard);
    shard.session.open();
    return shard;
  }

  private newSession(shard: VenueShard): VenueSession {
    const generation = shard.generation;
    const live = () => !this.closed && shard.generation === generation && this.shards.get(shard.index) === shard;
    return new VenueSession({
      mqttUrl: this.options.mqttUrl,
      appKey: this.options.appKey,
      sessionId: shard.sessionId,
      connectTimeoutMs: this.options.connectTimeoutMs,
      onLinkUp: () => {
        if (!live()) return;
        shard.connected = true;
        shard.needsReplay = true;
        shard.refusalReported = false;
        shard.forgetVenueState(false);
        shard.resetRetry();
        this.pump(shard);
      },
      onLinkDown: (reason) => {
        if (!live()) return;
        this.options.log.warn({ venue: this.options.venue, shard: shard.index, reason: reason.message }, 'venue session down');
        shard.connected = false;
        this.reconciler.cancel(shard);
        shard.forgetVenueState(false);
        this.coverage.forget(shard.symbols);
        this.calls.settle();
      },
      onPayload: (payload) => {
        if (!live()) return;
        const wanted = this.wanted.has(payload.symbol);
        this.options.events?.payload?.(payload.kind, wanted);
        if (!wanted) return;
        this.coverage.observe(payload.symbol, payload.kind, this.now());
        this.options.onPayload?.(payload);
      },
      onGarbage: (topic, why) => {
        this.options.events?.garbage?.(why);
        this.options.log.warn({ venue: this.options.venue, shard: shard.index, topic, why }, 'venue payload refused');
      },
      onConnectFailed: (error, attempt) => {
        if (!live()) return;
        this.options.log.warn(
          { venue: this.options.venue, shard: shard.index, attempt, err: error.message },
          'venue session connect failed',
        );
        // A refusal that retrying cannot fix (a bad app key) would otherwise retry forever, quietly;
        // reported once until the session connects again.
        if (!error.retryable && !shard.refusalReported) {
          shard.refusalReported = true;
          this.notice({ type: 'session_refused', shard: shard.index, reason: error.message });
        }
      },
      onCallbackError: (hook, error) => {
        if (live()) this.reopen(shard, `${hook} threw: ${errorMessage(error)}`);
      },
    });
  }

  /**
   * A crashed session is replaced at the same index with a fresh session id; its callers are
   * answered. A cause that repeats (a sink that throws on every payload) must not become a
   * reconnect loop or a notice storm: reopens back off, and the notice latches until the new
   * session has worked.
   */
  private reopen(shard: VenueShard, reason: string): void {
    shard.crashes += 1;
    this.options.log.error(
      { venue: this.options.venue, shard: shard.index, reason, crashes: shard.crashes },
      'venue session crashed; reopening',
    );
    if (shard.crashes === 1) this.notice({ type: 'shard_crashed', shard: shard.index, reason });
    this.calls.fail(
      { code: 'shard_crashed', retryable: true, message: `the session carrying these symbols crashed (${reason}); it is being reopened` },
      new Set(shard.symbols),
    );
    const old = shard.session;
    this.reconciler.cancel(shard);
    shard.generation += 1;
    shard.connected = false;
    shard.forgetVenueState(true);
    shard.resetRetry();
    this.coverage.forget(shard.symbols);
    shard.sessionId = newSessionId(this.options.venue, shard.index);
    const session = this.newSession(shard);
    shard.session = session;
    old.destroy();
    const delay = shard.crashes > 1 ? backoffDelay(shard.crashes - 1, 500, 30_000) : 0;
    clearTimeout(shard.reopenTimer);
    shard.reopenTimer = setTimeout(() => {
      shard.reopenTimer = undefined;
      if (!this.closed && !shard.retired && shard.session === session) session.open();
    }, delay);
  }

  private async dropShard(shard: VenueShard): Promise<void> {
    shard.retired = true;
    clearTimeout(shard.reopenTimer);
    this.reconciler.cancel(shard);
    shard.resetRetry();
    if (this.shards.get(shard.index) === shard) this.shards.delete(shard.index);
    await shard.session.close();
  }

  private pump(shard: VenueShard): void {
    if (this.closed || shard.retired || shard.attempt !== undefined || !shard.connected || shard.retryTimer !== undefined) return;
    if (shard.needsReplay) {
      shard.needsReplay = false;
      if (shard.symbols.length > 0) return this.reconciler.run(shard, 'replay', shard.symbols, []);
    }
    const { subscribe, unsubscribe } = shard.diff();
    if (subscribe.length > 0 || unsubscribe.length > 0) return this.reconciler.run(shard, 'diff', subscribe, unsubscribe);
    // An emptied shard keeps its session: closing it and opening another when a symbol comes
    // back would briefly need a sixth session, which the venue refuses.
    this.calls.settle();
  }

  private concluded(shard: VenueShard, attempt: Attempt, result: AttemptResult): void {
    let failure: string | undefined;
    let replan = false;
    switch (result.kind) {
      case 'ok':
        break;
      case 'refused': {
        // One unknown symbol fails the whole batch: exclude just the named ones, retry the rest at once.
        const sent = new Set(attempt.subscribe);
        const fresh = result.symbols.filter((s) => sent.has(s) && !this.rejected.has(s));
        if (fresh.length === 0) {
          // Naming nothing we sent (or only what is already excluded) changes no plan: resending
          // at once would spend the key's whole rate budget on one refusal. Back off instead.
          failure = `venue answered INVALID_SYMBOL naming ${result.symbols.length === 0 ? 'no symbol' : result.symbols.join(', ')}, none of them new in this batch`;
          break;
        }
        this.rejected.add(fresh);
        this.options.log.warn({ venue: this.options.venue, symbols: fresh }, 'venue refused symbols; excluded until their TTL');
        this.notice({
          type: 'refusal',
          symbols: fresh,
          until: this.rejected.expiry(fresh[0] ?? '') ?? this.now(),
          reason: 'invalid_symbol',
        });
        replan = true;
        break;
      }
      case 'ceiling': {
        // A capacity measurement, not a failure. A stated limit below the ceiling is taken as is;
        // a venue that enforces less than it states (or states nothing) is measured from what
        // this session held, else shrunk by a tenth, so each refusal moves the plan.
        const held = shard.confirmed.size;
        if (new Set([...shard.confirmed, ...attempt.subscribe]).size > this.ceiling) {
          // Sent under an older, higher ceiling: the current one already explains it, and the
          // plan made since then is what goes next.
          replan = true;
          break;
        }
        const measured =
          result.limit > 0 && result.limit < this.ceiling
            ? result.limit
            : held > 0 && held < this.ceiling
              ? held
              : Math.floor(this.ceiling * 0.9);
        if (measured < 1 || measured >= this.ceiling) {
          failure = `venue answered TOO_MANY_SYMBOLS at a ceiling of ${this.ceiling}`;
          break;
        }
        this.ceiling = measured;
        this.options.log.warn(
          { venue: this.options.venue, ceiling: measured, stated: result.limit },
          'venue ceiling lower than stated; re-sharding',
        );
        this.notice({ type: 'ceiling_lowered', ceiling: measured });
        replan = true;
        break;
      }
      case 'invalid_session':
        this.options.events?.attempt?.(attempt.kind, 'invalid_session');
        return this.reopen(shard, 'venue answered INVALID_SESSION');
      case 'failed':
        failure = result.reason;
    }
    this.options.events?.attempt?.(attempt.kind, failure === undefined ? (replan ? 'replanned' : 'ok') : 'failed');
    if (failure !== undefined) this.failed(shard, attempt.kind, failure);
    else this.succeeded(shard, attempt.kind);
    if (replan) this.replan();
    this.pump(shard);
    this.calls.settle();
  }

  private succeeded(shard: VenueShard, kind: AttemptKind): void {
    shard.retryAttempt = 0;
    if (kind === 'replay' || kind === 'reassert') shard.crashes = 0;
    if ((kind === 'reassert' || kind === 'replay') && shard.reassertFailures > 0) {
      this.notice({ type: 'reassert_recovered', shard: shard.index, failures: shard.reassertFailures });
      shard.reassertFailures = 0;
    }
  }

  private failed(shard: VenueShard, kind: AttemptKind, reason: string): void {
    if (kind === 'replay') shard.needsReplay = true;
    this.options.log.warn({ venue: this.options.venue, shard: shard.index, kind, reason }, 'venue reconcile failed');
    if (kind === 'reassert') {
      // Latched per session: a notice on entering failure and one on recovery, not one per tick.
      shard.reassertFailures += 1;
      if (shard.reassertFailures === 1) this.notice({ type: 'reassert_failing', shard: shard.index, reason });
      return;
    }
    const delay = backoffDelay(shard.retryAttempt++, 250, 30_000);
    shard.retryTimer = setTimeout(() => {
      shard.retryTimer = undefined;
      this.pump(shard);
    }, delay);
  }

  /** The blind re-assert: every connected session's whole list, one attempt per session per tick. */
  private tick(): void {
    const expired = this.rejected.prune();
    if (expired.length > 0) {
      this.notice({ type: 'refusal_expired', symbols: expired });
      this.replan();
    }
    for (const shard of this.shards.values()) {
      if (!shard.connected || shard.symbols.length === 0) continue;
      if (shard.attempt !== undefined) {
        // Still running: a second identical subscribe the venue has not answered is load, not safety.
        this.options.events?.reassertSkipped?.(shard.index);
        continue;
      }
      clearTimeout(shard.retryTimer);
      shard.retryTimer = undefined;
      shard.needsReplay = false;
      this.reconciler.run(shard, 'reassert', shard.symbols, shard.stale(this.now()));
    }
    this.reportCoverage();
  }

  reportCoverage(): void {
    const snapshot = this.coverageSnapshot();
    const byKind = snapshot.byKind;
    const covered = snapshot.covered.size;
    const counts = { snapshot: byKind.snapshot.size, quote: byKind.quote.size, tick: byKind.tick.size };
    const key = JSON.stringify([this.wanted.size, covered, counts]);
    if (key === this.lastCoverage) return;
    this.lastCoverage = key;
    this.notice({ type: 'coverage', wanted: this.wanted.size, covered, byKind: counts });
  }

  private notice(notice: VenueNotice): void {
    try {
      this.options.onNotice?.(notice);
    } catch (error) {
      this.options.log.error({ venue: this.options.venue, notice: notice.type, err: errorMessage(error) }, 'notice sink threw');
    }
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((s, i) => s === b[i]);
}

function newSessionId(venue: string, index: number): string {
  return `${venue}-${index}-${randomUUID().slice(0, 8)}`;
}
