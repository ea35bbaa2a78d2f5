import type { ServerFrame } from '@streamgate/protocol';
import type { Connection } from '../core/Connection.js';
import type { FakeTopicPublisher, TopicMember } from './FakeTopicPublisher.js';

/**
 * A client socket in memory. It records every frame it was sent (direct sends and topic
 * publishes alike, in arrival order), the topics it is on, the bytes it holds unsent and how it
 * was closed. Like UwsConnection, it ignores every call once closed.
 */
export class FakeConnection implements Connection, TopicMember {
  /** Frames as sent, in order. */
  readonly texts: string[] = [];
  /** When each frame in `texts` arrived, by the clock given at construction. */
  readonly times: number[] = [];
  readonly topics = new Set<string>();
  closedWith: { code: number; reason: string } | null = null;
  /** Bytes each send adds to the unsent buffer, until `drain()`. */
  bytesPerFrame = 0;
  /** When true, sends fail as at uWS's backpressure limit (the frame is not recorded). */
  refuseSends = false;
  private buffered = 0;
  private readonly closeListeners: Array<() => void> = [];

  constructor(
    private readonly publisher: FakeTopicPublisher | null = null,
    private readonly now: () => number = () => Date.now(),
  ) {}

  get closed(): boolean {
    return this.closedWith !== null;
  }

  /** Every frame parsed; a frame that is not JSON throws, which fails the test that sent it. */
  get frames(): ServerFrame[] {
    return this.texts.map((t) => JSON.parse(t) as ServerFrame);
  }

  /** Every frame as a plain record, for assertions on fields whatever the op. */
  records(): Array<Record<string, unknown>> {
    return this.texts.map((t) => JSON.parse(t) as Record<string, unknown>);
  }

  ops(): string[] {
    return this.frames.map((f) => f.op);
  }

  /** Frames with this `op`, narrowed to their type. */
  framesOf<Op extends ServerFrame['op']>(op: Op): Array<Extract<ServerFrame, { op: Op }>> {
    return this.frames.filter((f): f is Extract<ServerFrame, { op: Op }> => f.op === op);
  }

  send(frame: string): boolean {
    if (this.closed || this.refuseSends) return false;
    this.record(frame);
    return true;
  }

  receive(frame: string): void {
    if (!this.closed) this.record(frame);
  }

  subscribe(topic: string): void {
    if (this.closed) return;
    this.topics.add(topic);
    this.publisher?.join(topic, this);
  }

  unsubscribe(topic: string): void {
    if (this.closed) return;
    this.topics.delete(topic);
    this.publisher?.leave(topic, this);
  }

  bufferedAmount(): number {
    return this.closed ? 0 : this.buffered;
  }

  /** The client read everything it was sent. */
  drain(): void {
    this.buffered = 0;
  }

  cork(fn: () => void): void {
    fn();
  }

  /** Closes as uWS does: the socket leaves its topics and its close handler runs at once. */
  close(code: number, reason: string): void {
    if (this.closed) return;
    this.closedWith = { code, reason };
    for (const topic of this.topics) this.publisher?.leave(topic, this);
    this.topics.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
  }

  /** The client went away (no close frame from the server). */
  disconnect(): void {
    this.close(1006, '');
  }

  onClose(listener: () => void): void {
    this.closeListeners.push(listener);
  }

  private record(frame: string): void {
    this.texts.push(frame);
    this.times.push(this.now());
    this.buffered += this.bytesPerFrame;
  }
}
