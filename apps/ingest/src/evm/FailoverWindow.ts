/** Failovers within the last `windowMs`: the circuit breaker that trips a run into degraded mode. */
export class FailoverWindow {
  private times: number[] = [];

  constructor(private readonly windowMs: number) {}

  /** Records a failover at `now` and answers how many fall within the window, this one included. */
  record(now: number): number {
    this.times = [...this.times.filter((t) => now - t < this.windowMs), now];
    return this.times.length;
  }

  clear(): void {
    this.times = [];
  }
}
