import type { Clock, StreamName } from '@streamgate/protocol';

/**
 * Keyspace `xadd` events still waiting for the live message a writer publishes right behind its
 * write (docs/protocol.md §11). The message follows its event on the same connection, nearly
 * always in the same read of the socket, and a read's messages are all handed over before the
 * code that read them returns. So the first look comes once that code has returned (`afterTurn`,
 * a microtask by default), not on a timer nor an immediate: a write that travels with its message
 * costs the event loop nothing more. A 1 ms timer cancelled at once still woke the loop 1 ms later
 * (`clearTimeout` leaves Node's libuv timer armed for the cancelled one's time); an immediate
 * cost a second entry from libuv into JavaScript (Node's processImmediate) for every read, at
 * 1k/s over many quiet streams one for every entry.
 * Keys still waiting at that look get `windowMs` more (a message cut off by a segment boundary
 * arrives within it); one still waiting then was written by somebody who published nothing (a
 * foreign producer), and `onUnanswered` gets it, to be read from its cursor.
 */
export class UnansweredWrites {
  /** Events not yet answered, per key. */
  private readonly counts = new Map<StreamName, number>();
  /** The window's timer, once armed. */
  private cancel: (() => void) | null = null;
  /** A look at the end of this turn is queued (it cannot be taken back: it finds nothing then). */
  private lookQueued = false;
  private readonly look = (): void => this.endOfTurn();

  /** `afterTurn` runs its function once the code running now has returned: `queueMicrotask` unless a test steps it. */
  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly onUnanswered: (keys: StreamName[]) => void,
    private readonly afterTurn: (fn: () => void) => void = queueMicrotask,
  ) {}

  /** An `xadd` event of a key whose writers may publish; one inside an open window joins it. */
  written(key: StreamName): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
    if (this.cancel !== null || this.lookQueued) return;
    this.lookQueued = true;
    this.afterTurn(this.look);
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

  /** This turn's messages are handled: what is still waiting gets the window. */
  private endOfTurn(): void {
    this.lookQueued = false;
    if (this.counts.size === 0 || this.cancel !== null) return;
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
