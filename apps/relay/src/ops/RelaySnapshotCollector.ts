import { fitList } from '@streamgate/ops';
import type { RelaySnapshot } from '@streamgate/ops';
import type { DrainOutcome, DrainSchedule } from '../Drainer.js';
import { redisTargetLabel } from './redisTargetLabel.js';

export type RelayReadModeState = 'notify' | 'batch' | 'pending';

/** What a relay snapshot is made of, read from the relay's live state at each call. */
export interface RelayOpsState {
  readonly pod: string;
  /** Process start, ms since the epoch. */
  readonly startedAt: number;
  ready(): boolean;
  connections(): number;
  subscriptions(): number;
  streamsWatched(): number;
  deliveriesTotal(): number;
  refusals(): ReadonlyArray<readonly [string, number]>;
  /** Per allowlisted target (canonical URL, no credentials): the live read mode, pending before the first answer. */
  readModes(): ReadonlyArray<{ readonly target: string; readonly mode: RelayReadModeState }>;
  drain(): DrainSchedule | null;
  /** How the drain ended; null until then. Set in the last snapshot, published as the process exits. */
  drainOutcome(): DrainOutcome | null;
  /** Revocation records in force and subscriptions they ended (docs/protocol.md §10). */
  revocations?(): { held: number; ended: number };
}

const MAX_READ_MODES = 32;
/** Refusal reasons are a closed set (error codes, close names), far below this; the bound is for the size. */
const MAX_REFUSAL_REASONS = 64;
// Worst first, so a cut list keeps what needs attention: a target still unanswered, then batched ones.
const MODE_ORDER: Record<RelayReadModeState, number> = { pending: 0, batch: 1, notify: 2 };

/**
 * Builds one RelaySnapshot per call. Deliveries per second are over the interval since the
 * previous call (since process start for the first), so a skipped publish does not skew them.
 */
export class RelaySnapshotCollector {
  readonly #state: RelayOpsState;
  readonly #now: () => number;
  #lastAt: number;
  #lastDeliveries = 0;

  constructor(state: RelayOpsState, now: () => number = Date.now) {
    this.#state = state;
    this.#now = now;
    this.#lastAt = state.startedAt;
  }

  collect(seq: number): RelaySnapshot {
    const s = this.#state;
    const at = this.#now();
    const deliveriesTotal = s.deliveriesTotal();
    const elapsedMs = at - this.#lastAt;
    const deliveriesPerSecond = elapsedMs > 0 ? Math.max(0, ((deliveriesTotal - this.#lastDeliveries) * 1000) / elapsedMs) : 0;
    this.#lastAt = at;
    this.#lastDeliveries = deliveriesTotal;

    const modes = fitList(
      s
        .readModes()
        .map((m) => ({ target: redisTargetLabel(m.target), mode: m.mode }))
        .sort((a, b) => MODE_ORDER[a.mode] - MODE_ORDER[b.mode] || a.target.localeCompare(b.target)),
      MAX_READ_MODES,
    );
    const refusals = fitList(s.refusals(), MAX_REFUSAL_REASONS);
    const drain = s.drain();
    return {
      kind: 'relay',
      v: 1,
      pod: s.pod.slice(0, 120),
      at,
      startedAt: s.startedAt,
      seq,
      truncated: modes.truncated || refusals.truncated,
      ready: s.ready(),
      connections: s.connections(),
      subscriptions: s.subscriptions(),
      streamsWatched: s.streamsWatched(),
      deliveriesTotal,
      deliveriesPerSecond: Math.round(deliveriesPerSecond * 100) / 100,
      refusals: Object.fromEntries(refusals.items.map(([reason, n]) => [reason.slice(0, 64), n])),
      readModes: modes.items,
      ...(s.revocations === undefined ? {} : { revocations: s.revocations() }),
      // A window of 0 (all at once) is drawn as the shortest schedule the schema allows.
      drain:
        drain === null
          ? null
          : {
              startedAt: drain.startedAt,
              windowMs: Math.max(1, drain.windowMs),
              connectionsAtStart: drain.connectionsAtStart,
              outcome: s.drainOutcome(),
            },
    };
  }
}
