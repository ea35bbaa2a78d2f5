/**
 * Runs one read per key at a time, at most `max` keys at once, in the order they asked. A key
 * asking while its read runs is read once more after it (what it asked for may postdate the
 * read); asking again while queued costs nothing. So a reconnect that asks for every watched
 * stream at once sends `max` reads, not thousands.
 */
export class ReadQueue<K> {
  private readonly queued = new Set<K>();
  private readonly running = new Set<K>();
  private readonly again = new Set<K>();
  private closed = false;

  constructor(
    private readonly max: number,
    private readonly read: (key: K) => Promise<void>,
  ) {}

  request(key: K): void {
    if (this.closed) return;
    if (this.running.has(key)) this.again.add(key);
    else this.queued.add(key);
    this.pump();
  }

  /** Drops a key's queued and repeated reads (one running finishes on its own). */
  forget(key: K): void {
    this.queued.delete(key);
    this.again.delete(key);
  }

  isBusy(key: K): boolean {
    return this.running.has(key) || this.queued.has(key);
  }

  close(): void {
    this.closed = true;
    this.queued.clear();
    this.again.clear();
  }

  private pump(): void {
    for (const key of this.queued) {
      if (this.running.size >= this.max) return;
      this.queued.delete(key);
      this.running.add(key);
      void this.read(key).finally(() => {
        this.running.delete(key);
        if (this.again.delete(key) && !this.closed) this.queued.add(key);
        this.pump();
      });
    }
  }
}
