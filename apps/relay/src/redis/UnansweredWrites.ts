import type { Clock, StreamName } from '@streamgate/protocol';

/**
 * Keyspace `xadd` events still waiting for the live message a writer publishes right behind its
 * write (docs/protocol.md §11). The message follows its event on the same connection, in the same
 * read of the socket, so a key still waiting `windowMs` after the first event of the window was
 * written by somebody who published nothing (a foreign producer): `onUnanswered` gets it, to be
 * read from its cursor. One timer for every event within the window, cancelled as soon as every
 * event is answered: a write that travels with its message wakes the event loop once, for the
 * socket read, and not again for a look that would find nothing (at 1k/s over many quiet
 * streams nearly every entry had its own such wake-up).
 */
export class UnansweredWrites {
  /** Events not yet answered, per key. */
  private readonly counts = new Map<StreamName, number>();
  private cancel: (() => void) | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly onUnanswered: (keys: StreamName[]) => void,
  ) {}

  /** An `xadd` event of a key whose writers may publish. */
  written(key: StreamName): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    this.cancel ??= this.clock.after(this.windowMs, () => this.expire());
  }

  /** A live message of the key arrived (parsed or not): it answers one of its events. */
  answered(key: StreamName): void {
    const waiting = this.counts.get(key) ?? 0;
    if (waiting > 1) this.counts.set(key, waiting - 1);
    else this.counts.delete(key);
    if (this.counts.size === 0) this.stop();
  }

  /** The key is no longer watched. */
  forget(key: StreamName): void {
    this.counts.delete(key);
    if (this.counts.size === 0) this.stop();
  }

  close(): void {
    this.counts.clear();
    this.stop();
  }

  private stop(): void {
    this.cancel?.();
    this.cancel = null;
  }

  private expire(): void {
    this.cancel = null;
    if (this.counts.size === 0) return;
    const keys = [...this.counts.keys()];
    this.counts.clear();
    this.onUnanswered(keys);
  }
}
