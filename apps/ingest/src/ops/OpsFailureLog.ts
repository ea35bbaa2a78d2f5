import type { CoreLog } from '@streamgate/ingest-core';
import type { OpsPublishFailure } from '@streamgate/ops';

/** Why a snapshot did not go out (the publisher's failures include a collection that threw). */
export type OpsFailure = OpsPublishFailure;

/**
 * Counts every failed snapshot and logs it, at most once per `everyMs` per failure code with
 * how many were not logged since: an ops Redis that is down fails a snapshot every second, and
 * a warning a second would bury the worker's own log lines.
 */
export class OpsFailureLog {
  readonly #lastLogged = new Map<string, number>();
  readonly #unlogged = new Map<string, number>();

  constructor(
    private readonly log: CoreLog,
    private readonly count: (code: OpsFailure['code']) => void,
    private readonly everyMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  failed(failure: OpsFailure): void {
    this.count(failure.code);
    const now = this.now();
    const last = this.#lastLogged.get(failure.code);
    if (last !== undefined && now - last < this.everyMs) {
      this.#unlogged.set(failure.code, (this.#unlogged.get(failure.code) ?? 0) + 1);
      return;
    }
    this.log.warn({ ...failure, notLoggedSince: this.#unlogged.get(failure.code) ?? 0 }, 'ops snapshot not published');
    this.#lastLogged.set(failure.code, now);
    this.#unlogged.set(failure.code, 0);
  }
}
