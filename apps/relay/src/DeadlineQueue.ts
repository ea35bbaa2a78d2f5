import type { Clock } from '@streamgate/protocol';

/** What a deadline calls when it falls due; `kind` tells an owner's deadlines apart. */
export interface DeadlineOwner {
  onDeadline(kind: number): void;
}

/** One scheduled deadline; cancel it through the queue that made it. */
export interface Deadline {
  readonly at: number;
}

interface Entry extends Deadline {
  readonly at: number;
  readonly seq: number;
  readonly owner: DeadlineOwner;
  readonly kind: number;
  /** Place in the heap; -1 once it fired or was cancelled. */
  index: number;
}

/** Timers fire at once for delays past 2^31-1 ms (~24.8 days): longer waits are armed in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const shared = new WeakMap<Clock, DeadlineQueue>();

/**
 * Every token deadline of the pod on one timer. A timer per deadline costs each idle subscription
 * two Timeout objects, a timer list for nearly every one (their durations differ) and the
 * closures that arm and cancel them: about 1 KB of heap per subscription. Here a deadline is one
 * small heap entry; the queue arms the clock for the earliest only. Deadlines fall due in time
 * order (ties in the order they were added), each with the clock at or past its time.
 */
export class DeadlineQueue {
  private readonly heap: Entry[] = [];
  private seq = 0;
  private armedAt: number | null = null;
  private disarm: (() => void) | null = null;

  constructor(private readonly clock: Clock) {}

  /** The queue every session on this clock shares. */
  static of(clock: Clock): DeadlineQueue {
    let queue = shared.get(clock);
    if (queue === undefined) {
      queue = new DeadlineQueue(clock);
      shared.set(clock, queue);
    }
    return queue;
  }

  get now(): number {
    return this.clock.now();
  }

  /** Deadlines waiting. */
  get size(): number {
    return this.heap.length;
  }

  /** Calls `owner.onDeadline(kind)` once the clock reaches `at` (epoch ms), unless cancelled first. */
  add(at: number, owner: DeadlineOwner, kind: number): Deadline {
    const entry: Entry = { at, seq: this.seq++, owner, kind, index: this.heap.length };
    this.heap.push(entry);
    this.up(entry.index);
    if (entry.index === 0 && (this.armedAt === null || at < this.armedAt)) this.arm();
    return entry;
  }

  /** Removes a deadline that has not fired; a no-op for one that fired or was cancelled. */
  cancel(deadline: Deadline): void {
    const entry = deadline as Entry;
    const i = entry.index;
    if (i < 0 || this.heap[i] !== entry) return;
    entry.index = -1;
    const last = this.heap.pop() as Entry;
    if (last !== entry) {
      this.heap[i] = last;
      last.index = i;
      this.down(i);
      this.up(last.index);
    }
    // An armed timer for a deadline that is gone would only wake the loop: drop it when none is left.
    if (this.heap.length === 0) this.stopTimer();
  }

  private readonly fire = (): void => {
    this.armedAt = null;
    this.disarm = null;
    try {
      for (;;) {
        const top = this.heap[0];
        if (top === undefined || top.at > this.clock.now()) break;
        this.removeTop();
        top.owner.onDeadline(top.kind);
      }
    } finally {
      // Armed again even when a deadline's owner threw: the others still fall due.
      if (this.heap.length > 0) this.arm();
    }
  };

  private arm(): void {
    this.stopTimer();
    const top = this.heap[0];
    if (top === undefined) return;
    const delay = Math.min(MAX_TIMER_MS, Math.max(0, top.at - this.clock.now()));
    this.armedAt = top.at;
    this.disarm = this.clock.after(delay, this.fire);
  }

  private stopTimer(): void {
    this.disarm?.();
    this.disarm = null;
    this.armedAt = null;
  }

  private removeTop(): void {
    const top = this.heap[0] as Entry;
    top.index = -1;
    const last = this.heap.pop() as Entry;
    if (last === top) return;
    this.heap[0] = last;
    last.index = 0;
    this.down(0);
  }

  private before(a: Entry, b: Entry): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private up(i: number): void {
    const heap = this.heap;
    const entry = heap[i] as Entry;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const parent = heap[p] as Entry;
      if (!this.before(entry, parent)) break;
      heap[i] = parent;
      parent.index = i;
      i = p;
    }
    heap[i] = entry;
    entry.index = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const entry = heap[i] as Entry;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const child = r < n && this.before(heap[r] as Entry, heap[l] as Entry) ? r : l;
      const c = heap[child] as Entry;
      if (!this.before(c, entry)) break;
      heap[i] = c;
      c.index = i;
      i = child;
    }
    heap[i] = entry;
    entry.index = i;
  }
}
