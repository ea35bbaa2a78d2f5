import { z } from 'zod';
import { errorMessage } from '@streamgate/ingest-core';
import { backoffDelay } from '@streamgate/protocol';
import { CoverageMap } from './CoverageMap.js';
import { FeedCalls } from './FeedCalls.js';
import { appKeyRefusedMessage } from './FeedError.js';
import type { FeedAnswer, FeedError } from './FeedError.js';
import type { VenueFeedOptions } from './VenueFeedOptions.js';
import { planShards } from './planShards.js';
import { RejectionList } from './RejectionList.js';
import { SessionBudget } from './SessionBudget.js';
import { ShardReconciler } from './ShardReconciler.js';
import type { AttemptResult } from './ShardReconciler.js';
import type { VenueNotice } from './VenueNotice.js';
import { venueSymbolSchema } from './venueSchemas.js';
import type { VenueKind } from './venueSchemas.js';
import { VenueShard } from './VenueShard.js';
import type { Attempt, AttemptKind, OpenShardSession } from './VenueShard.js';
import { judgeAttempt } from './judgeAttempt.js';
import { newSessionId } from './newSessionId.js';
import { openShardSessions } from './openShardSessions.js';

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
  /** Set once the venue refused the app key: final, nothing is sent under it any more. */
  private keyRefusal: Extract<FeedError, { code: 'app_key_refused' }> | undefined;
  private droppingRefused: Promise<void> = Promise.resolve();
  private readonly now: () => number;
  private readonly openSession: OpenShardSession;
  private readonly budget: SessionBudget;
  private readonly stopWatchingBudget: () => void;

  constructor(private readonly options: VenueFeedOptions) {
    this.now = options.now ?? Date.now;
    this.openSession = openShardSessions(options, {
      isLive: (shard, generation) => !this.closed && shard.generation === generation && this.shards.get(shard.index) === shard,
      linkUp: (shard) => {
        shard.linkUp();
        this.pump(shard);
      },
      linkDown: (shard) => {
        // Cancelled first: what it sent becomes maybe-held and a ghost, and the drop then forgets
        // the maybe-held while the ghosts stay for the same session id.
        this.reconciler.cancel(shard);
        shard.linkDown();
        this.coverage.forget(shard.symbols);
        this.calls.settle();
      },
      payload: (payload) => {
        const wanted = this.wanted.has(payload.symbol);
        this.options.events?.payload?.(payload.kind, wanted);
        if (!wanted) return;
        this.coverage.observe(payload.symbol, payload.kind, this.now());
        this.options.onPayload?.(payload);
      },
      notice: (notice) => this.notice(notice),
      crashed: (shard, reason) => this.reopen(shard, reason),
      keyRefused: (shard, reason) => this.refuseKey(shard, reason),
    });
    this.budget = options.sessions ?? new SessionBudget(options.maxSessions);
    // Another feed on the key closed a session: symbols this one could not place may fit now.
    this.stopWatchingBudget = this.budget.onFreed(() => {
      if (this.unplaced.size > 0) this.replan();
    });
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
        confirmed: (s) => !this.wanted.has(s) || (this.shardOf(s)?.isConfirmed(s) ?? false),
        held: (s) => [...this.shards.values()].some((sh) => sh.mayHold(s)),
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
      appKeyRefused: this.keyRefusal !== undefined,
      shards: [...this.shards.values()].map((sh) => ({
        index: sh.index,
        sessionId: sh.sessionId,
        connected: sh.connected,
        symbols: sh.symbols.length,
        confirmed: sh.confirmedCount,
        attempt: sh.attempt?.kind ?? null,
        reassertFailures: sh.reassertFailures,
      })),
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.stopWatchingBudget();
    clearTimeout(this.tickTimer);
    clearInterval(this.coverageTimer);
    this.calls.fail({ code: 'closed', retryable: false, message: 'the feed is closing' });
    await Promise.all([...this.shards.values()].map((sh) => this.dropShard(sh)));
    await this.droppingRefused;
  }

  private change(symbols: unknown, apply: (list: string[]) => { add: string[]; remove: string[] }): Promise<FeedAnswer> {
    if (this.closed) return Promise.resolve({ ok: false, error: { code: 'closed', retryable: false, message: 'the feed is closed' } });
    const parsed = symbolListSchema.safeParse(symbols);
    if (!parsed.success) {
      // Refused before any state moves: one bad list must not cost anyone else their symbols.
      const why = parsed.error.issues.map((i) => `${i.path.join('.') || 'symbols'}: ${i.message}`).join('; ');
      return Promise.resolve({ ok: false, error: { code: 'invalid_symbols', retryable: false, symbols, message: why } });
    }
    if (this.keyRefusal !== undefined) return Promise.resolve({ ok: false, error: this.keyRefusal });
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
    if (this.closed || this.keyRefusal !== undefined) return;
    const eligible = [...this.wanted].filter((s) => !this.rejected.has(s));
    const plan = planShards({
      shards: [...this.shards.values()].map((sh) => ({ index: sh.index, symbols: sh.symbols, capacity: this.ceiling })),
      wanted: eligible,
      // Sessions held plus those the key has free, never more than this venue's own cap.
      maxShards: Math.min(this.options.maxSessions, this.shards.size + this.budget.free),
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
        shard.assign(symbols);
        this.pump(shard);
      }
    }
    for (const shard of this.shards.values()) {
      if (planned.has(shard.index) || shard.symbols.length === 0) continue;
      shard.assign([]);
      this.pump(shard);
    }
    this.calls.settle();
  }

  private openShard(index: number): VenueShard {
    this.budget.take();
    const shard = new VenueShard(index, () => newSessionId(index), this.openSession);
    this.shards.set(index, shard);
    shard.session.open();
    return shard;
  }

  /**
   * A crashed session is replaced at the same index with a fresh session id; its callers are
   * answered. A cause that repeats (a sink that throws on every payload) must not become a
   * reconnect loop or a notice storm: reopens back off, and the notice latches until the new
   * session has worked.
   */
  private reopen(shard: VenueShard, reason: string): void {
    const crashes = shard.crashed();
    this.options.log.error({ venue: this.options.venue, shard: shard.index, reason, crashes }, 'venue session crashed; reopening');
    if (crashes === 1) this.notice({ type: 'shard_crashed', shard: shard.index, reason });
    this.calls.fail(
      { code: 'shard_crashed', retryable: true, message: `the session carrying these symbols crashed (${reason}); it is being reopened` },
      new Set(shard.symbols),
    );
    this.reconciler.cancel(shard);
    this.coverage.forget(shard.symbols);
    const old = shard.replaceSession(crashes > 1 ? backoffDelay(crashes - 1, 500, 30_000) : 0);
    old.destroy();
  }

  private async dropShard(shard: VenueShard): Promise<void> {
    shard.retire();
    this.reconciler.cancel(shard);
    const held = this.shards.get(shard.index) === shard;
    if (held) this.shards.delete(shard.index);
    await shard.session.close();
    // Given back once the venue was told: a session another feed opened sooner could be the key's sixth.
    if (held) this.budget.give();
  }

  private pump(shard: VenueShard): void {
    if (this.closed || this.keyRefusal !== undefined || !shard.ready) return;
    if (shard.takeReplay() && shard.symbols.length > 0) return this.reconciler.run(shard, 'replay', shard.symbols, []);
    const { subscribe, unsubscribe } = shard.diff();
    if (subscribe.length > 0 || unsubscribe.length > 0) return this.reconciler.run(shard, 'diff', subscribe, unsubscribe);
    // An emptied shard keeps its session: closing it and opening another when a symbol comes
    // back would briefly need a sixth session, which the venue refuses.
    this.calls.settle();
  }

  private concluded(shard: VenueShard, attempt: Attempt, result: AttemptResult): void {
    const verdict = judgeAttempt(shard, attempt, result, this.ceiling, (s) => this.rejected.has(s));
    if (verdict.kind === 'reopen') {
      this.options.events?.attempt?.(attempt.kind, 'invalid_session');
      return this.reopen(shard, verdict.reason);
    }
    if (verdict.kind === 'key_refused') {
      this.options.events?.attempt?.(attempt.kind, 'key_refused');
      return this.refuseKey(shard, verdict.reason);
    }
    const { failure, replan, refused, ceiling } = verdict;
    if (refused !== undefined) {
      this.rejected.add(refused);
      this.options.log.warn({ venue: this.options.venue, symbols: refused }, 'venue refused symbols; excluded until their TTL');
      const until = this.rejected.expiry(refused[0] ?? '') ?? this.now();
      this.notice({ type: 'refusal', symbols: [...refused], until, reason: 'invalid_symbol' });
    }
    if (ceiling !== undefined) {
      this.ceiling = ceiling.measured;
      this.options.log.warn(
        { venue: this.options.venue, ceiling: ceiling.measured, stated: ceiling.stated },
        'venue ceiling lower than stated; re-sharding',
      );
      this.notice({ type: 'ceiling_lowered', ceiling: ceiling.measured });
    }
    this.options.events?.attempt?.(attempt.kind, failure === undefined ? (replan ? 'replanned' : 'ok') : 'failed');
    if (failure !== undefined) this.failed(shard, attempt.kind, failure);
    else this.succeeded(shard, attempt.kind);
    if (replan) this.replan();
    this.pump(shard);
    this.calls.settle();
  }

  /**
   * The venue refused the app key, over HTTP (INVALID_APP_KEY) or at a CONNECT (return code 4).
   * A refused app key refuses every session's calls alike, and neither a retry nor a new session
   * can change that, so backing off would only knock on the venue for ever. The feed stops asking
   * (its sessions close, they hold slots of a key that works for nothing), answers every caller
   * with the final error and reports it once; a corrected key is read at the next start.
   */
  private refuseKey(shard: VenueShard, reason: string): void {
    if (this.keyRefusal !== undefined) return;
    const { venue, log } = this.options;
    this.keyRefusal = {
      code: 'app_key_refused',
      retryable: false,
      venue,
      message: appKeyRefusedMessage(venue, reason),
    };
    log.error(
      { venue, shard: shard.index, code: 'app_key_refused', reason },
      'venue refused the app key; its subscriptions stop until the topology is fixed and the worker restarted',
    );
    this.notice({ type: 'app_key_refused', shard: shard.index, reason });
    this.calls.fail(this.keyRefusal);
    const shards = [...this.shards.values()];
    this.coverage.forget(shards.flatMap((sh) => sh.symbols));
    this.droppingRefused = Promise.all(shards.map((sh) => this.dropShard(sh))).then(
      () => undefined,
      (error: unknown) => log.error({ venue, err: errorMessage(error) }, 'venue sessions did not close after the app key was refused'),
    );
  }

  private succeeded(shard: VenueShard, kind: AttemptKind): void {
    const failures = shard.succeeded(kind);
    if (failures > 0) this.notice({ type: 'reassert_recovered', shard: shard.index, failures });
  }

  private failed(shard: VenueShard, kind: AttemptKind, reason: string): void {
    if (kind === 'replay') shard.owesReplay();
    this.options.log.warn({ venue: this.options.venue, shard: shard.index, kind, reason }, 'venue reconcile failed');
    if (kind === 'reassert') {
      // Latched per session: a notice on entering failure and one on recovery, not one per tick.
      if (shard.reassertFailed() === 1) this.notice({ type: 'reassert_failing', shard: shard.index, reason });
      return;
    }
    shard.scheduleRetry(() => this.pump(shard));
  }

  /** The blind re-assert: every connected session's whole list, one attempt per session per tick. */
  private tick(): void {
    if (this.keyRefusal !== undefined) return this.reportCoverage();
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
      shard.beginReassert();
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
