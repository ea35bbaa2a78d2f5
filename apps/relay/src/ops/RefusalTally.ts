/**
 * Refusals by reason, counted where the refusal metrics are counted (RelayMetrics), kept as
 * plain numbers because a snapshot is taken synchronously and prom-client reads are async.
 */
export class RefusalTally {
  readonly #counts = new Map<string, number>();

  add(reason: string, count = 1): void {
    this.#counts.set(reason, (this.#counts.get(reason) ?? 0) + count);
  }

  /** Cumulative counts, most frequent first. */
  entries(): Array<[string, number]> {
    return [...this.#counts].sort((a, b) => b[1] - a[1]);
  }
}
