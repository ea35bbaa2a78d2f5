import type { AttemptResult } from './ShardReconciler.js';
import type { Attempt, VenueShard } from './VenueShard.js';

/** What a concluded attempt asks of the feed. */
export type AttemptVerdict =
  /** INVALID_SESSION: the session is replaced. */
  | { readonly kind: 'reopen'; readonly reason: string }
  /** INVALID_APP_KEY: retrying cannot help; the feed stops working under this key. */
  | { readonly kind: 'key_refused'; readonly reason: string }
  | {
      readonly kind: 'settled';
      /** Set when the attempt failed: the feed backs off (or latches a re-assert notice). */
      readonly failure?: string;
      /** The plan must be made again (symbols excluded, a lower ceiling, or a stale ceiling). */
      readonly replan: boolean;
      /** Symbols the venue refused that this batch sent and that were not excluded yet. */
      readonly refused?: readonly string[];
      /** A measured session ceiling below the current one, and what the venue stated (0: nothing). */
      readonly ceiling?: { readonly measured: number; readonly stated: number };
    };

/**
 * Reads one concluded attempt against the feed's state: a refusal naming fresh symbols excludes
 * them and retries the rest at once; one naming nothing new backs off (resending at once would
 * spend the key's whole rate budget on one refusal); TOO_MANY_SYMBOLS is a capacity measurement,
 * not a failure.
 */
export function judgeAttempt(
  shard: VenueShard,
  attempt: Attempt,
  result: AttemptResult,
  ceiling: number,
  isRejected: (symbol: string) => boolean,
): AttemptVerdict {
  switch (result.kind) {
    case 'ok':
      return { kind: 'settled', replan: false };
    case 'failed':
      return { kind: 'settled', replan: false, failure: result.reason };
    case 'invalid_session':
      return { kind: 'reopen', reason: 'venue answered INVALID_SESSION' };
    case 'key_refused':
      return { kind: 'key_refused', reason: result.reason };
    case 'refused': {
      const sent = new Set(attempt.subscribe);
      const fresh = result.symbols.filter((s) => sent.has(s) && !isRejected(s));
      if (fresh.length > 0) return { kind: 'settled', replan: true, refused: fresh };
      const named = result.symbols.length === 0 ? 'no symbol' : result.symbols.join(', ');
      return { kind: 'settled', replan: false, failure: `venue answered INVALID_SYMBOL naming ${named}, none of them new in this batch` };
    }
    case 'ceiling': {
      // Sent under an older, higher ceiling: the current one already explains it, and the plan
      // made since then is what goes next.
      if (shard.wouldHold(attempt.subscribe) > ceiling) return { kind: 'settled', replan: true };
      // A stated limit below the ceiling is taken as is; a venue that enforces less than it
      // states (or states nothing) is measured from what this session held, else shrunk by a
      // tenth, so each refusal moves the plan.
      const held = shard.confirmedCount;
      const measured =
        result.limit > 0 && result.limit < ceiling ? result.limit : held > 0 && held < ceiling ? held : Math.floor(ceiling * 0.9);
      if (measured < 1 || measured >= ceiling) {
        return { kind: 'settled', replan: false, failure: `venue answered TOO_MANY_SYMBOLS at a ceiling of ${ceiling}` };
      }
      return { kind: 'settled', replan: true, ceiling: { measured, stated: result.limit } };
    }
  }
}
