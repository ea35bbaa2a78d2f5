import type { StreamInfo as JetStreamInfo } from '@nats-io/jetstream';
import type { Clock } from '@streamgate/protocol';
import { answeredWithoutLeader } from './answeredWithoutLeader.js';
import { republishMode } from './republishMode.js';
import type { RepublishMode } from './republishMode.js';

/** What a look at the JetStream stream found that its readers must act on. */
export interface StreamChange {
  /** Deleted and created again since the first look (its `created` time differs). */
  readonly recreated: boolean;
  /** Another server leads it now: what the old leader republished last may never have arrived. */
  readonly leaderChanged: boolean;
  /**
   * Its last sequence, from a periodic check only (null from other sightings): a watched position
   * that was above it when the check was sent belongs to an older incarnation.
   */
  readonly lastSeq: number | null;
}

export interface StreamCheckOptions {
  readonly jetStream: string;
  readonly clock: Clock;
  readonly intervalMs: number;
  /** A check unanswered (or failing) this long marks the stream unreachable. */
  readonly timeoutMs: number;
  /** STREAM.INFO; null when the stream does not exist. */
  readonly info: () => Promise<JetStreamInfo | null>;
  /** Called as a periodic check is sent: its `lastSeq` is to be compared with the positions as they are now. */
  readonly onSend: () => void;
  readonly onChange: (change: StreamChange) => void;
  readonly onRepublish: (mode: RepublishMode, previous: RepublishMode | null) => void;
  readonly onError: (error: Error) => void;
}

/** Taken before a STREAM.INFO is sent: replies are applied in the order they were asked. */
export type CheckTicket = number;

/**
 * Watches one JetStream stream as a whole, once per interval whatever the number of watched
 * subjects: its incarnation (`created`), its leader, its republish configuration, and whether it
 * answers. Every STREAM.INFO the source makes for other reasons (a resume's inspect, a catch-up
 * page) is a sighting too, so a recreation seen by a resume resets the watched streams at once.
 */
export class StreamCheck {
  private created: string | null = null;
  /** How many recreations the looks have seen: positions read in an older one are stale. */
  private generation = 0;
  private leader: string | null = null;
  private mode: RepublishMode | null = null;
  private sent = 0;
  private applied = 0;
  /** When the oldest check not yet answered successfully was sent; null when the last one was. */
  private failingSince: number | null = null;
  private inFlight = false;
  private cancelTimer: () => void = () => undefined;
  private closed = false;

  constructor(private readonly options: StreamCheckOptions) {
    this.schedule(0);
  }

  get republish(): RepublishMode | null {
    return this.mode;
  }

  /** Answered within the timeout (a stream reported missing is an answer). */
  get answering(): boolean {
    return this.silentForMs < this.options.timeoutMs;
  }

  get silentForMs(): number {
    return this.failingSince === null ? 0 : this.options.clock.now() - this.failingSince;
  }

  ticket(): CheckTicket {
    return ++this.sent;
  }

  get incarnation(): number {
    return this.generation;
  }

  /**
   * A STREAM.INFO reply (null: the stream is missing), asked with `ticket`. False when a reply
   * asked later was taken already: this one may describe an older incarnation.
   */
  observe(ticket: CheckTicket, info: JetStreamInfo | null): boolean {
    return this.apply(ticket, info, false);
  }

  private apply(ticket: CheckTicket, info: JetStreamInfo | null, periodic: boolean): boolean {
    if (ticket < this.applied || this.closed) return false;
    this.applied = ticket;
    // A missing stream changes nothing yet: whatever is created next has another `created`.
    if (info === null) return true;
    if (answeredWithoutLeader(info)) return true;
    const recreated = this.created !== null && this.created !== info.created;
    if (recreated) this.generation++;
    const leader = info.cluster?.leader ?? null;
    const leaderChanged = !recreated && this.leader !== null && leader !== null && leader !== this.leader;
    this.created = info.created;
    if (leader !== null) this.leader = leader;
    const mode = republishMode(this.options.jetStream, info.config.republish);
    if (mode !== this.mode) {
      const previous = this.mode;
      this.mode = mode;
      this.options.onRepublish(mode, previous);
    }
    this.options.onChange({ recreated, leaderChanged, lastSeq: periodic ? info.state.last_seq : null });
    return true;
  }

  /** Looks now, out of turn (a leader election advisory, a reconnect). */
  checkSoon(): void {
    if (this.inFlight || this.closed) return;
    this.cancelTimer();
    this.schedule(0);
  }

  close(): void {
    this.closed = true;
    this.cancelTimer();
  }

  private schedule(ms: number): void {
    this.cancelTimer = this.options.clock.after(ms, () => void this.check());
  }

  private async check(): Promise<void> {
    if (this.closed) return;
    this.inFlight = true;
    const sentAt = this.options.clock.now();
    const ticket = this.ticket();
    this.failingSince ??= sentAt;
    this.options.onSend();
    try {
      const info = await this.options.info();
      this.failingSince = null;
      this.apply(ticket, info, true);
    } catch (thrown) {
      // A check cut short by close() failed for no reason worth reporting.
      if (!this.closed) this.options.onError(thrown instanceof Error ? thrown : new Error(String(thrown)));
    } finally {
      this.inFlight = false;
      if (!this.closed) this.schedule(this.options.intervalMs);
    }
  }
}
