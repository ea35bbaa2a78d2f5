import { fitList } from '@streamgate/ops';
import type { AuthSnapshot } from '@streamgate/ops';

/** What an auth snapshot is made of, read at each call. */
export interface AuthOpsState {
  readonly pod: string;
  /** Process start, ms since the epoch. */
  readonly startedAt: number;
  ready(): boolean;
  tokensIssuedTotal(): number;
  /** Cumulative refused requests by tRPC code. */
  refusals(): ReadonlyMap<string, number>;
  /** Key ids only: the snapshot never holds key material. */
  signingKeyIds(): readonly string[];
}

const MAX_KEY_IDS = 16;
/** tRPC has about twenty codes; the bound is for the size. */
const MAX_REFUSAL_CODES = 32;

/** Builds one AuthSnapshot per call; tokens per second over the interval since the previous call. */
export class AuthSnapshotCollector {
  readonly #state: AuthOpsState;
  readonly #now: () => number;
  #lastAt: number;
  #lastIssued = 0;

  constructor(state: AuthOpsState, now: () => number = Date.now) {
    this.#state = state;
    this.#now = now;
    this.#lastAt = state.startedAt;
  }

  collect(seq: number): AuthSnapshot {
    const s = this.#state;
    const at = this.#now();
    const issued = s.tokensIssuedTotal();
    const elapsedMs = at - this.#lastAt;
    const perSecond = elapsedMs > 0 ? Math.max(0, ((issued - this.#lastIssued) * 1000) / elapsedMs) : 0;
    this.#lastAt = at;
    this.#lastIssued = issued;
    const keys = fitList(
      s.signingKeyIds().map((kid) => kid.slice(0, 120)),
      MAX_KEY_IDS,
    );
    const refusals = fitList(
      [...s.refusals()].sort((a, b) => b[1] - a[1]),
      MAX_REFUSAL_CODES,
    );
    return {
      kind: 'auth',
      v: 1,
      pod: s.pod.slice(0, 120),
      at,
      startedAt: s.startedAt,
      seq,
      truncated: keys.truncated || refusals.truncated,
      ready: s.ready(),
      tokensIssuedTotal: issued,
      tokensPerSecond: Math.round(perSecond * 100) / 100,
      refusals: Object.fromEntries(refusals.items.map(([code, n]) => [code.slice(0, 64), n])),
      signingKeyIds: keys.items.filter((kid) => kid.length > 0),
    };
  }
}
