import type { Clock } from '@streamgate/protocol';

/** The relay's ping interval until its `welcome` names one (docs/protocol.md §8). */
export const DEFAULT_PING_INTERVAL_MS = 25_000;
/** How long past the ping interval a client waits for a frame before it gives the socket up. */
export const DEFAULT_LIVENESS_GRACE_MS = 10_000;

/**
 * One socket's "heard nothing" deadline: any frame (or the open) moves it on; once
 * `pingIntervalMs + graceMs` pass with nothing, `onSilent` runs once. A frame costs one clock
 * read, not a timer re-arm: the single timer checks the last moment heard when it fires.
 */
export class LivenessWatch {
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #onSilent: () => void;
  #intervalMs = DEFAULT_PING_INTERVAL_MS;
  #lastHeard: number;
  #cancel: (() => void) | undefined;

  constructor(clock: Clock, graceMs: number, onSilent: () => void) {
    this.#clock = clock;
    this.#graceMs = graceMs;
    this.#onSilent = onSilent;
    this.#lastHeard = clock.now();
    this.#arm(this.boundMs);
  }

  /** Milliseconds of silence after which the socket is given up. */
  get boundMs(): number {
    return this.#intervalMs + this.#graceMs;
  }

  heard(): void {
    this.#lastHeard = this.#clock.now();
  }

  /** The relay announced its ping interval (`welcome.pingIntervalMs`). */
  setInterval(intervalMs: number): void {
    this.#intervalMs = intervalMs;
    this.#cancel?.();
    this.#arm(Math.max(0, this.#lastHeard + this.boundMs - this.#clock.now()));
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
  }

  #arm(ms: number): void {
    this.#cancel = this.#clock.after(ms, () => {
      this.#cancel = undefined;
      const silentFor = this.#clock.now() - this.#lastHeard;
      if (silentFor >= this.boundMs) this.#onSilent();
      else this.#arm(this.boundMs - silentFor);
    });
  }
}
