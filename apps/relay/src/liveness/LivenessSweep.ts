import type { Clock } from '@streamgate/protocol';

/** What the sweep needs of one socket. */
export interface LivenessTarget {
  /** Sends the protocol's `ping` frame. */
  ping(): void;
  /** Nothing was heard for a whole interval after a ping: close the socket. */
  timedOut(): void;
}

/**
 * One socket's liveness: two flags, kept by the sweep and set by the edge on every frame the
 * socket sends. Only the sweep and `heard()` change it.
 */
export class LivenessMember {
  /** A frame arrived since the last ping. */
  #heardSinceSweep = true;
  /** A ping went out and its round is not over. */
  #awaiting = false;
  #slot: number;

  constructor(
    readonly target: LivenessTarget,
    slot: number,
  ) {
    this.#slot = slot;
  }

  /** Any frame from the client, a `pong` or anything else, proves that it still reads. */
  heard(): void {
    this.#heardSinceSweep = true;
  }

  /** Index of the slot holding this member; -1 once removed. */
  get slot(): number {
    return this.#slot;
  }

  /** A ping went out and nothing was heard since, for a whole round. */
  get silent(): boolean {
    return this.#awaiting && !this.#heardSinceSweep;
  }

  /** The sweep sent a ping: a new round starts. */
  pinged(): void {
    this.#heardSinceSweep = false;
    this.#awaiting = true;
  }

  /** The sweep let it go. */
  removed(): void {
    this.#slot = -1;
  }
}

export interface LivenessSweepOptions {
  readonly clock: Clock;
  /** Milliseconds between two pings of one socket, and the time it has to answer one. */
  readonly intervalMs: number;
  /**
   * Slots of the wheel: the sweep wakes `slots` times per interval and visits one slot each time.
   * Default: one per TICK_MS of the interval.
   */
  readonly slots?: number;
  /** A socket was closed for silence. */
  readonly onTimeout?: () => void;
}

/**
 * How often the sweep wakes by default. A tick sends its slot's pings back to back, one socket
 * write each, and holds the event loop meanwhile: at 10 slots a pod of 10,000 sockets sent 1,000
 * in one go every 2.5 s, a stall of several milliseconds that live entries waited behind. At
 * 250 ms a tick holds 1/100 of the sockets (100 of 10,000, a few tenths of a millisecond). Waking
 * more often costs an idle pod more than it spreads: on the relay's VM each wake-up cost about
 * 0.1 ms, and the 20 a second of a 50 ms tick were a sixth of what an idle relay spent.
 */
const TICK_MS = 250;

/**
 * The relay's side of liveness (docs/protocol.md §8, "Liveness"): every socket is pinged once per
 * interval, and a socket that sent nothing during the whole interval after a ping is closed.
 * One relay-wide timer drives a wheel of slots, so a socket costs a small object and no timer of
 * its own, and the pings of many sockets are spread over the interval rather than sent in one burst.
 */
export class LivenessSweep {
  private readonly slots: Array<Set<LivenessMember>>;
  private readonly tickMs: number;
  private cursor = 0;
  private nextSlot = 0;
  private cancel: (() => void) | null = null;
  /** When the next tick is due: ticks keep to a fixed grid so that timer lateness does not add up. */
  private nextAt = 0;
  private closed = false;
  private members = 0;

  constructor(private readonly options: LivenessSweepOptions) {
    const count = Math.max(1, Math.floor(options.slots ?? options.intervalMs / TICK_MS));
    this.slots = Array.from({ length: count }, () => new Set<LivenessMember>());
    this.tickMs = options.intervalMs / count;
  }

  get size(): number {
    return this.members;
  }

  /** Starts watching a socket; its first ping comes within one interval. */
  add(target: LivenessTarget): LivenessMember {
    // Round robin rather than the current slot: a burst of connections is pinged spread out too.
    const member = new LivenessMember(target, this.nextSlot);
    this.nextSlot = (this.nextSlot + 1) % this.slots.length;
    this.slots[member.slot]?.add(member);
    this.members++;
    if (this.cancel === null && !this.closed) this.arm();
    return member;
  }

  remove(member: LivenessMember): void {
    if (member.slot < 0) return;
    if (this.slots[member.slot]?.delete(member) === true) this.members--;
    member.removed();
  }

  close(): void {
    this.closed = true;
    this.cancel?.();
    this.cancel = null;
  }

  private arm(): void {
    const now = this.options.clock.now();
    // After an idle spell (no sockets) or a stall longer than a tick, the grid starts again from now.
    this.nextAt = this.nextAt + this.tickMs >= now ? this.nextAt + this.tickMs : now + this.tickMs;
    this.cancel = this.options.clock.after(this.nextAt - now, () => this.tick());
  }

  private tick(): void {
    this.cancel = null;
    const slot = this.slots[this.cursor];
    this.cursor = (this.cursor + 1) % this.slots.length;
    // Straight over the set, no copy: a visit removes at most the member visited, which a set's
    // iteration allows; one that joined the slot meanwhile is pinged early, within its first interval.
    if (slot !== undefined) for (const member of slot) this.visit(member);
    if (!this.closed && this.size > 0) this.arm();
  }

  private visit(member: LivenessMember): void {
    if (member.silent) {
      this.remove(member);
      this.options.onTimeout?.();
      member.target.timedOut();
      return;
    }
    member.pinged();
    member.target.ping();
  }
}
