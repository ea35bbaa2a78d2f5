/**
 * The browser's clock against the pods' (`receivedAt − at` is skew plus delivery latency). The
 * smallest recent sample is the best estimate, and a replayed backlog, whose samples are large,
 * never lowers it. Samples beyond MAX_SKEW_MS are replay (or a clock too wrong to correct) and
 * are not taken: the estimate then stays 0, the clocks being assumed in sync.
 */
export const MAX_SKEW_MS = 60_000;
const SAMPLES = 30;

export class ClockSkew {
  readonly #samples: number[] = [];

  /** `at` from a snapshot, `receivedAt` from the browser's clock. */
  observe(at: number, receivedAt: number): void {
    const sample = receivedAt - at;
    if (Math.abs(sample) > MAX_SKEW_MS) return;
    this.#samples.push(sample);
    if (this.#samples.length > SAMPLES) this.#samples.shift();
  }

  /** Milliseconds the browser's clock is ahead of the pods' (negative: behind). */
  get ms(): number {
    return this.#samples.length === 0 ? 0 : Math.min(...this.#samples);
  }
}
