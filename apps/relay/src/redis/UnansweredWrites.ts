import type { Clock, StreamName } from '@streamgate/protocol';

/**
 * Keyspace `xadd` events still waiting for the live message a writer publishes right behind its
 * write (docs/protocol.md §11). The message follows its event on the same connection, nearly
 * always in the same read of the socket. So the first look comes when this turn's I/O has been
 * handled (`clock.after(0)`, an immediate), not on a timer: a write that travels with its message
 * arms no timer at all. A 1 ms timer cancelled at once still woke the event loop 1 ms later:
 * `clearTimeout` leaves Node's libuv timer armed for the cancelled one's time, and the loop woke
 * to find nothing due. At 1k/s over many quiet streams that was one extra wake-up per entry,
 * about a quarter of the relay's CPU.
 * Keys still waiting at that look get `windowMs` more (a message cut off by a segment boundary
 * arrives within it); one still waiting then was written by somebody who published nothing (a
 * foreign producer), and `onUnanswered` gets it, to be read from its cursor.
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
    this.cancel ??= this.clock.after(0, () => this.endOfTurn());
  }

  /**
   * A live message of the key arrived (parsed or not): it answers one of its events. False when
   * no event was waiting for it: no write preceded it on the connection (or a read already
   * covers it), so it vouches for nothing.
   */
  answered(key: StreamName): boolean {
    const waiting = this.counts.get(key) ?? 0;
    if (waiting > 1) this.counts.set(key, waiting - 1);
    else this.counts.delete(key);
    if (this.counts.size === 0) this.stop();
    return waiting > 0;
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

  /** This turn's I/O is handled: what is still waiting gets the window. */
  private endOfTurn(): void {
    this.cancel = null;
    if (this.counts.size === 0) return;
    this.cancel = this.clock.after(this.windowMs, () => this.expire());
  }

  private expire(): void {
    this.cancel = null;
    if (this.counts.size === 0) return;
    const keys = [...this.counts.keys()];
    this.counts.clear();
    this.onUnanswered(keys);
  }
}
