/**
 * The sessions one app key may hold at one venue, shared by every feed on that key. The venue
 * counts sessions per key, not per topology entry: two entries each allowed their own five
 * would open a sixth between them, which the venue refuses at CONNECT, and the refused session
 * would redial for ever while its symbols stay uncovered.
 */
export class SessionBudget {
  private held = 0;
  private readonly listeners = new Set<() => void>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`a session budget needs an integer max >= 1, got ${max}`);
  }

  /** Sessions that may still be opened under the key. */
  get free(): number {
    return this.max - this.held;
  }

  /** Counts a session about to be opened; the caller plans within `free`, so none free is a bug. */
  take(): void {
    if (this.held >= this.max) throw new RangeError(`all ${this.max} sessions of the key are held`);
    this.held += 1;
  }

  /** A session closed: one more may open, and feeds waiting for room are told. */
  give(): void {
    if (this.held <= 0) throw new RangeError('a session was given back that was never taken');
    this.held -= 1;
    for (const listener of [...this.listeners]) listener();
  }

  /** Calls `listener` whenever a session is given back; answers the way to stop. */
  onFreed(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
