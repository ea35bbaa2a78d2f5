import { jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager, StreamInfo as JetStreamInfo } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetStreamSequence, jetStreamSubject, systemClock } from '@streamgate/protocol';
import type { Clock, StreamId, StreamName } from '@streamgate/protocol';
import type { RangePage, SourceResult, StreamInfo, StreamSource } from '../core/StreamSource.js';
import type { JetStreamSourceOptions } from './JetStreamSourceOptions.js';
import { LiveStreams } from './LiveStreams.js';
import { NatsLink } from './NatsLink.js';
import { isStreamNotFound, natsSourceError, toError } from './natsSourceError.js';
import { RepublishMissingError } from './RepublishMissingError.js';
import { StreamCheck } from './StreamCheck.js';
import type { CheckTicket } from './StreamCheck.js';
import { SubjectReader } from './SubjectReader.js';
import { subjectInfo } from './subjectInfo.js';

export type { JetStreamSourceOptions } from './JetStreamSourceOptions.js';

/**
 * StreamSource over one JetStream stream of a NATS cluster: each per-task stream is one subject
 * of it (jetStreamSubject), each entry one message, its id the message's stream sequence
 * (`0-<seq>`). Live entries arrive by subscription to the stream's republished messages, one
 * subscription per watched stream (LiveStreams); history and every gap are read by sequence
 * (SubjectReader); the JetStream stream itself is looked at once per interval for a recreation,
 * a new leader and its republish configuration (StreamCheck). One connection per source.
 */
export class JetStreamStreamSource implements StreamSource {
  private readonly link: NatsLink;
  /** The manager of the connection it was made on: a new connection (NatsLink) gets a new one. */
  private manager: { readonly nc: NatsConnection; readonly jsm: Promise<JetStreamManager> } | null = null;
  private readonly reader: SubjectReader;
  private readonly check: StreamCheck;
  private readonly live: LiveStreams;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  private readonly jetStream: string;
  /**
   * Streams whose first metadata read (an inspect without probe: the hub's start of a stream) is
   * done and whose watch is not yet: the incarnation the position it gave belongs to. A
   * recreation seen in between would otherwise go unnoticed by the watch that follows.
   */
  private readonly startedIn = new Map<StreamName, number>();

  constructor(private readonly options: JetStreamSourceOptions) {
    this.clock = options.clock ?? systemClock;
    this.timeoutMs = options.requestTimeoutMs ?? 2_000;
    this.jetStream = options.target.stream;
    this.link = new NatsLink({
      servers: options.target.servers,
      tls: options.target.tls,
      ...(options.user === undefined ? {} : { user: options.user }),
      ...(options.pass === undefined ? {} : { pass: options.pass }),
      ...(options.token === undefined ? {} : { token: options.token }),
      ...(options.connectionName === undefined ? {} : { name: options.connectionName }),
      pingIntervalMs: options.pingIntervalMs ?? 2_000,
      connectTimeoutMs: this.timeoutMs,
      clock: this.clock,
      // The server behind the connection may be another: what was republished while the
      // connection was down is lost, and a new leader may hold what the old one never sent.
      onReconnect: () => {
        this.check.checkSoon();
        this.live.readAll();
        options.onReconnect?.();
      },
      onError: (error) => options.onError('connection', error),
      onRetry: (error) => (options.onConnectRetry ?? ((retried) => options.onError('connection', retried)))(error),
    });
    // A new leader says so at once; the periodic check is the backstop for a lost advisory.
    this.link.subscribe(`$JS.EVENT.ADVISORY.STREAM.LEADER_ELECTED.${this.jetStream}`, () => this.check.checkSoon());
    this.reader = new SubjectReader(
      () => this.link.connection(this.timeoutMs),
      () => this.jsm(),
      this.jetStream,
      this.timeoutMs,
      options.onRead,
    );
    this.live = new LiveStreams({
      jetStream: this.jetStream,
      listener: options.listener,
      reader: this.reader,
      clock: this.clock,
      opened: () => this.link.whenOpen(),
      subscribe: (subject, callback) => this.link.subscribe(subject, callback),
      maxConcurrentReads: options.maxConcurrentReads ?? 64,
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      suspect: () => this.check.checkSoon(),
      onError: options.onError,
      onRecreated: (stream, cause) => options.onRecreated?.(stream, cause),
    });
    this.check = new StreamCheck({
      jetStream: this.jetStream,
      clock: this.clock,
      intervalMs: options.checkIntervalMs ?? 1_000,
      timeoutMs: this.timeoutMs,
      info: () => this.streamInfo(),
      onSend: () => this.live.snapshot(),
      onChange: (change) => this.live.apply(change),
      onRepublish: (mode, previous) => {
        if (mode === 'none') options.onError('republish', new RepublishMissingError(this.jetStream));
        if (mode !== 'live' || previous !== null) this.live.setMode(mode);
      },
      onError: (error) => options.onError('check', error),
    });
  }

  /** Connected, and the JetStream stream's info answered lately (a frozen leader shows once a check is overdue). */
  get healthy(): boolean {
    return this.link.connected && this.check.answering;
  }

  get unansweredForMs(): number {
    return this.healthy ? 0 : this.check.silentForMs;
  }

  /** How the JetStream stream's republish serves live reads, once a look has said; null before. */
  get republish(): 'live' | 'headers' | 'none' | null {
    return this.check.republish;
  }

  async inspect(stream: StreamName, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>> {
    // A Redis-style probe names no sequence: looked at without it, classifyRecovery finds it
    // beyond every `0-<seq>` id (or the stream missing) and answers `reset`, as for a stream
    // recreated under the client.
    const seq = probe === undefined ? undefined : (jetStreamSequence(probe) ?? undefined);
    const subject = jetStreamSubject(this.jetStream, stream);
    try {
      const before = this.check.incarnation;
      const ticket = this.check.ticket();
      const read = await this.reader.facts(subject, seq);
      const current = this.sighted(ticket, read?.info ?? null);
      if (probe === undefined) this.startedIn.set(stream, current ? this.check.incarnation : before);
      if (read === null) return { ok: true, value: { info: null, probeExists: false } };
      return { ok: true, value: subjectInfo(read.facts, read.probe) };
    } catch (thrown) {
      return { ok: false, error: natsSourceError(toError(thrown)) };
    }
  }

  async range(stream: StreamName, after: StreamId, count: number): Promise<SourceResult<RangePage>> {
    const seq = jetStreamSequence(after);
    const subject = jetStreamSubject(this.jetStream, stream);
    try {
      // No entry lies after a Redis-style id (its first part is a time, every sequence id's is 0).
      const page = seq === null ? { entries: [], afterStored: false } : await this.reader.after(subject, seq, count);
      // The metadata is read after the page: a trim that removed `after` and entries behind it
      // before the page was read shows in it (`afterStored` false), never the other way round.
      const ticket = this.check.ticket();
      const read = await this.reader.facts(subject, seq ?? undefined);
      this.sighted(ticket, read?.info ?? null);
      const described = read === null ? { info: null } : subjectInfo(read.facts, read.probe);
      return { ok: true, value: { entries: page.entries, info: described.info, afterExists: page.afterStored } };
    } catch (thrown) {
      if (isStreamNotFound(thrown)) return { ok: true, value: { entries: [], info: null, afterExists: false } };
      return { ok: false, error: natsSourceError(toError(thrown)) };
    }
  }

  watch(stream: StreamName, after: StreamId): void {
    const started = this.startedIn.get(stream);
    this.startedIn.delete(stream);
    const stale = started !== undefined && started !== this.check.incarnation;
    this.live.watch(stream, after, stale ? 'recreated' : null);
  }

  unwatch(stream: StreamName): void {
    this.startedIn.delete(stream);
    this.live.unwatch(stream);
  }

  async close(): Promise<void> {
    this.check.close();
    this.live.close();
    await this.link.close();
  }

  /** A resume's or a page's STREAM.INFO tells of a recreation at once, as the periodic check would. */
  private sighted(ticket: CheckTicket, info: JetStreamInfo | null): boolean {
    return this.check.observe(ticket, info);
  }

  private async streamInfo(): Promise<JetStreamInfo | null> {
    try {
      return await this.reader.info();
    } catch (thrown) {
      if (isStreamNotFound(thrown)) return null;
      throw thrown;
    }
  }

  private async jsm(): Promise<JetStreamManager> {
    const nc = await this.link.connection(this.timeoutMs);
    if (this.manager?.nc !== nc) this.manager = { nc, jsm: jetstreamManager(nc, { timeout: this.timeoutMs, checkAPI: false }) };
    return this.manager.jsm;
  }
}
