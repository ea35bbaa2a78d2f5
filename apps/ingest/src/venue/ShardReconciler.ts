import { errorMessage } from '@streamgate/ingest-core';
import type { VenueCallResult, VenueHttpClient } from './VenueHttpClient.js';
import type { VenueKind } from './venueSchemas.js';
import type { Attempt, AttemptKind, VenueShard } from './VenueShard.js';

/** What one concluded attempt means for the feed; the shard's venue-side sets are already updated. */
export type AttemptResult =
  | { kind: 'ok' }
  /** INVALID_SYMBOL: the venue named these and subscribed nothing of the batch. */
  | { kind: 'refused'; symbols: string[] }
  /** TOO_MANY_SYMBOLS: a measurement of the session ceiling (`limit` 0 when the venue did not say). */
  | { kind: 'ceiling'; limit: number }
  /** INVALID_SESSION, measured against this very session. */
  | { kind: 'invalid_session' }
  /** INVALID_APP_KEY on either half: the key is wrong for every session, not just this one. */
  | { kind: 'key_refused'; reason: string }
  | { kind: 'failed'; reason: string };

export interface ReconcilerHooks {
  concluded(shard: VenueShard, attempt: Attempt, result: AttemptResult): void;
  staleAnswer(): void;
}

type Outcome = { kind: 'deadline' } | { kind: 'answered'; unsub: VenueCallResult | undefined; sub: VenueCallResult | undefined };

/**
 * Runs a shard's HTTP reconciles, one at a time per shard. An attempt mints a token, and both
 * things that can conclude it — its deadline and its answer — carry that token: a tag such as
 * "shard 2's re-assert" names a slot, not the attempt occupying it: a deadline keyed by the slot
 * concludes whichever attempt holds the slot when it fires, and at a tick boundary that is the
 * next one, so every re-assert would be killed by its predecessor's deadline.
 */
export class ShardReconciler {
  private tokens = 0;
  /**
   * How long a request we stopped waiting for may still be applied by the venue. Nothing bounds
   * that for certain; a generous window costs only one extra unsubscribe per tick meanwhile.
   */
  private readonly ghostMs: number;

  constructor(
    private readonly http: VenueHttpClient,
    private readonly kinds: readonly VenueKind[],
    private readonly timeoutMs: number,
    private readonly now: () => number,
    private readonly hooks: ReconcilerHooks,
  ) {
    this.ghostMs = Math.max(5 * timeoutMs, 60_000);
  }

  run(shard: VenueShard, kind: AttemptKind, subscribe: readonly string[], unsubscribe: readonly string[]): void {
    const token = ++this.tokens;
    const abort = new AbortController();
    const sessionId = shard.sessionId;
    const deadline = setTimeout(() => this.conclude(shard, token, { kind: 'deadline' }), this.timeoutMs);
    shard.begin({ token, kind, startedAt: this.now(), abort, deadline, subscribe: [...subscribe], unsubscribe: [...unsubscribe] });
    // Every call waits for the rate limiter (acquire): a fail-fast check would drop a tick's only
    // recovery for a whole interval to avoid waiting a second.
    const opts = { signal: abort.signal, limiter: 'acquire' as const, timeoutMs: this.timeoutMs };
    void (async () => {
      // The subscribe half is sent even when the unsubscribe half failed: one failing half must not cancel the other.
      const unsub = unsubscribe.length > 0 ? await this.http.unsubscribe(sessionId, unsubscribe, this.kinds, opts) : undefined;
      const sub = subscribe.length > 0 ? await this.http.subscribe(sessionId, subscribe, this.kinds, opts) : undefined;
      this.conclude(shard, token, { kind: 'answered', unsub, sub });
    })().catch((error: unknown) => {
      const sub: VenueCallResult = { ok: false, error: { code: 'transport', retryable: true, message: errorMessage(error) } };
      this.conclude(shard, token, { kind: 'answered', unsub: undefined, sub });
    });
  }

  /** Abandons the shard's attempt (its session dropped or was replaced); a late answer is then stale. */
  cancel(shard: VenueShard): void {
    const attempt = shard.end();
    if (attempt === undefined) return;
    clearTimeout(attempt.deadline);
    attempt.abort.abort();
    shard.uncertain(attempt.subscribe, this.now() + this.ghostMs);
  }

  private conclude(shard: VenueShard, token: number, outcome: Outcome): void {
    const attempt = shard.retired ? undefined : shard.end(token);
    if (attempt === undefined) {
      if (outcome.kind === 'answered') this.hooks.staleAnswer();
      return;
    }
    clearTimeout(attempt.deadline);
    const ghostUntil = this.now() + this.ghostMs;
    if (outcome.kind === 'deadline') {
      attempt.abort.abort();
      shard.uncertain(attempt.subscribe, ghostUntil);
      return this.hooks.concluded(shard, attempt, { kind: 'failed', reason: `no answer within ${this.timeoutMs} ms` });
    }
    let failure: string | undefined;
    if (outcome.unsub !== undefined) {
      if (outcome.unsub.ok) shard.unsubscribed(attempt.unsubscribe);
      else if (outcome.unsub.error.code === 'invalid_app_key') {
        return this.hooks.concluded(shard, attempt, { kind: 'key_refused', reason: outcome.unsub.error.message });
      } else failure = outcome.unsub.error.message;
    }
    const result = this.classify(shard, attempt, outcome.sub, ghostUntil);
    this.hooks.concluded(shard, attempt, result.kind === 'ok' && failure !== undefined ? { kind: 'failed', reason: failure } : result);
  }

  private classify(shard: VenueShard, attempt: Attempt, sub: VenueCallResult | undefined, ghostUntil: number): AttemptResult {
    if (sub === undefined) return { kind: 'ok' };
    if (sub.ok) {
      shard.subscribed(attempt.subscribe);
      return { kind: 'ok' };
    }
    const error = sub.error;
    switch (error.code) {
      case 'invalid_symbols':
        return { kind: 'refused', symbols: error.symbols };
      case 'too_many_symbols':
        return { kind: 'ceiling', limit: error.limit };
      case 'invalid_session':
        return { kind: 'invalid_session' };
      case 'invalid_app_key':
        return { kind: 'key_refused', reason: error.message };
      case 'timeout':
      case 'transport':
      case 'aborted':
        shard.uncertain(attempt.subscribe, ghostUntil);
        return { kind: 'failed', reason: error.message };
      case 'local_rate_limited':
      case 'venue_rate_limited':
      case 'http_error':
      case 'garbage':
        return { kind: 'failed', reason: error.message };
    }
  }
}
