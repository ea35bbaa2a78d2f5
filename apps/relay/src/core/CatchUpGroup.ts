import { compareStreamIds, sleepOn } from '@streamgate/protocol';
import { CloseCode, relayError } from '@streamgate/protocol';
import type { Clock, RelayError, StreamId, StreamName } from '@streamgate/protocol';
import type { HubSubscriber } from './HubSubscriber.js';
import type { HubMetrics } from './HubMetrics.js';
import type { StreamSource } from './StreamSource.js';
import type { StreamFrames } from './serverFrames.js';
import { classifyRecovery } from './classifyRecovery.js';

export interface CatchUpHost {
  readonly source: StreamSource;
  readonly metrics: HubMetrics;
  readonly pageSize: number;
  readonly maxBufferedBytes: number;
  /** A member whose socket holds more than this is not sent further pages until it drains. */
  readonly maxPendingCatchUpBytes: number;
  readonly stream: StreamName;
  readonly frames: StreamFrames;
  /** Times the pause while every member is paced. */
  readonly clock: Clock;
  /** Last id published live on this pod, read after every await. */
  liveCursor(): StreamId;
  /** Changes when the stream is recreated: a page read across a change is of the old one. */
  readonly incarnation: number;
  promote(sub: HubSubscriber): void;
  end(sub: HubSubscriber, error: RelayError): void;
}

/**
 * Catches up every subscriber of one stream that is behind the pod's live cursor, with one
 * paged, exclusive-start XRANGE walk shared by all of them: after a deploy, a thousand clients
 * resuming the same stream cost one read per page, not a thousand.
 *
 * The seam: a subscriber joins the topic only once it holds every entry up to the live cursor
 * as it stands at that moment, and the cursor only moves together with a publish, in the same
 * tick. So the first live publish it gets is the entry right after its last catch-up entry.
 */
export class CatchUpGroup {
  private readonly members = new Set<HubSubscriber>();
  private running = false;

  constructor(private readonly host: CatchUpHost) {}

  add(sub: HubSubscriber): void {
    this.members.add(sub);
    if (!this.running) void this.run();
  }

  remove(sub: HubSubscriber): void {
    this.members.delete(sub);
  }

  /** Removes and returns every member (the stream was recreated under them). */
  takeAll(): HubSubscriber[] {
    const all = [...this.members];
    this.members.clear();
    return all;
  }

  private endMember(sub: HubSubscriber, error: RelayError): void {
    this.members.delete(sub);
    this.host.end(sub, error);
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (this.members.size > 0) {
        if (!(await this.step())) await sleepOn(this.host.clock, PACING_POLL_MS);
      }
    } finally {
      this.running = false;
    }
  }

  /** Members whose socket can take more now; the rest wait, still catching up. */
  private ready(): HubSubscriber[] {
    const out: HubSubscriber[] = [];
    for (const sub of this.members) {
      if (sub.conn.closed) this.members.delete(sub);
      else if (sub.conn.bufferedAmount() > this.host.maxBufferedBytes) this.cut(sub);
      else if (sub.conn.bufferedAmount() <= this.host.maxPendingCatchUpBytes) out.push(sub);
      else if (sub.pauseCatchUp()) this.host.metrics.catchUpPaused();
    }
    return out;
  }

  private cut(sub: HubSubscriber): void {
    this.members.delete(sub);
    this.host.metrics.slowConsumerCut();
    sub.conn.close(CloseCode.slowConsumer, 'slow consumer: resume from your last id');
  }

  /**
   * One page for the members that can take it. Returns false when every member was paused, so
   * the loop waits for sockets to drain: a resume from far back is paced to the client's reading
   * speed instead of piling the whole history into the pod's memory.
   */
  private async step(): Promise<boolean> {
    const host = this.host;
    const ready = this.ready();
    let lo: StreamId | null = null;
    for (const sub of ready) {
      sub.resumeCatchUp();
      if (lo === null || compareStreamIds(sub.position, lo) < 0) lo = sub.position;
    }
    if (lo === null) return this.members.size === 0;
    const cursorBefore = host.liveCursor();
    const incarnation = host.incarnation;
    const result = await host.source.range(host.stream, lo, host.pageSize);
    // The stream was recreated during the read: the page may be of the old incarnation, and the
    // members it was read for have left. Whoever joined since is served from a fresh read.
    if (host.incarnation !== incarnation) return true;
    if (!result.ok) {
      host.metrics.sourceError('xrange');
      const error = relayError('stream_unavailable', `stream cannot be read: ${result.error.message}`);
      for (const sub of [...this.members]) this.endMember(sub, error);
      return true;
    }
    host.metrics.catchUpPage();
    // MAXLEN trimming may have eaten the head of the history while we paged through it; XRANGE
    // would then silently start at the next retained entry. The same rule that decides a resume
    // decides whether the page is still contiguous with `lo`.
    const { info, afterExists } = result.value;
    const decision = classifyRecovery(lo, info, afterExists);
    if (decision.recovery === 'truncated' || decision.recovery === 'reset') {
      const error = relayError('history_trimmed', 'entries after your position were trimmed during catch-up; subscribe again from it');
      let acknowledged = false;
      for (const sub of [...this.members]) {
        if (compareStreamIds(sub.position, lo) !== 0) continue;
        if (sub.acknowledgedGap === lo) acknowledged = true;
        else this.endMember(sub, error);
      }
      // Members told of this gap already take the page as it is; the rest go on next step.
      if (!acknowledged) return true;
    }
    const page = result.value.entries;
    const cursor = host.liveCursor();
    // Only subscribers at or after `lo` get this page: the page is contiguous after `lo`, so
    // a subscriber behind it (it joined during the read) would see a hole. It is served next step.
    const aligned = ready.filter((sub) => this.members.has(sub) && compareStreamIds(sub.position, lo) >= 0);

    const texts: { id: StreamId; text: string }[] = [];
    let beyondCursor = false;
    for (const entry of page) {
      if (compareStreamIds(entry.id, cursor) > 0) {
        beyondCursor = true;
        break;
      }
      const frame = host.frames.entry(entry);
      if (frame.malformed) host.metrics.malformedEntry();
      texts.push({ id: entry.id, text: frame.text });
    }

    const lastText = texts[texts.length - 1];
    for (const sub of aligned) {
      let sent = 0;
      sub.conn.cork(() => {
        for (const { id, text } of texts) {
          if (compareStreamIds(id, sub.position) <= 0) continue;
          // Pages can be large; stop mid-page too, the rest waits for the socket to drain.
          if (sub.conn.bufferedAmount() > host.maxPendingCatchUpBytes) break;
          if (!sub.conn.send(text)) break;
          sub.advance(id);
          sent++;
        }
      });
      host.metrics.delivered(sent, 'catch-up');
    }

    const last = page[page.length - 1];
    // Everything up to the live cursor is known to have been in this page when: the page went
    // past the cursor (it is contiguous), or ended exactly on it, or was short while the cursor
    // did not move during the read (entries the reader published meanwhile may postdate the read).
    const covered = beyondCursor || (last !== undefined && last.id === cursor) || (page.length < host.pageSize && cursor === cursorBefore);

    for (const sub of aligned) {
      if (!this.members.has(sub)) continue;
      if (sub.conn.closed) {
        this.members.delete(sub);
        continue;
      }
      if (sub.conn.bufferedAmount() > host.maxBufferedBytes) {
        this.cut(sub);
        continue;
      }
      // `covered` speaks for the page; a member that stopped mid-page (paced, or a send refused)
      // holds only part of it and stays for the next step.
      const tookPage = lastText === undefined || compareStreamIds(sub.position, lastText.id) >= 0;
      if ((covered && tookPage) || compareStreamIds(sub.position, cursor) >= 0) {
        this.members.delete(sub);
        host.promote(sub);
      }
    }
    return true;
  }
}

/** How often a catch-up whose members are all paused looks at their sockets again. */
const PACING_POLL_MS = 10;
