import type { ChainableCommander, Redis } from 'ioredis';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { isClusterClient } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import type { RangePage, SourceResult, StreamInfo, StreamSource } from '../core/StreamSource.js';
import type { RedisSourceOptions } from './RedisSourceOptions.js';
import { TargetConnections } from './TargetConnections.js';
import type { LiveReader, ReadMode } from './LiveReader.js';
import { LiveReaderFactory } from './LiveReaderFactory.js';
import { ReadModeSwitch } from './ReadModeSwitch.js';
import { ReadModeProbe } from './ReadModeProbe.js';
import { systemClock } from '@streamgate/protocol';
import { IncarnationTracker } from './IncarnationTracker.js';
import type { CheckSnapshot, KeySighting } from './KeySighting.js';
import { parseEntries, parseInteger, parseTypeName, parseXinfo } from './parseReplies.js';
import { PingProbe } from './PingProbe.js';
import { ReplicationIdProbe } from './ReplicationIdProbe.js';
import { pipelineReply } from './pipelineReply.js';
import { redisIncarnationProbe } from './redisIncarnationProbe.js';
import { pipelineByNode } from './pipelineByNode.js';
import type { PipelineReplies } from './pipelineByNode.js';
import { sourceError, toError } from './redisFailure.js';
import type { StreamResetCause } from './StreamResetCause.js';

export type { RedisSourceOptions } from './RedisSourceOptions.js';

const COMMAND_SOCKET_TIMEOUT_MS = 10_000;
/** Watched keys the periodic incarnation check looks at per recreationCheckIntervalMs, by read mode. */
const BATCH_KEYS_PER_INTERVAL = 1_000;
const NOTIFY_KEYS_PER_INTERVAL = 100;
/** The periodic check's slices per interval: keys seen missing are looked at every slice. */
const PERIODIC_SLICES = 10;

/**
 * StreamSource over one Redis instance: one command connection (XINFO, XRANGE, CLIENT UNBLOCK,
 * CONFIG GET) and the live reader of the read mode in force: on a server that notifies for
 * stream keys, a pub/sub and a read connection; otherwise as few blocking readers as the stream
 * count needs (`maxStreamsPerReader` each), so a pod serving a thousand streams holds a handful
 * of connections, not a thousand.
 */
export class RedisStreamSource implements StreamSource {
  private readonly command: RedisClient;
  private readonly modes: ReadModeSwitch;
  private readonly incarnations: IncarnationTracker;
  private readonly probeTimer: NodeJS.Timeout;
  private readonly pings: PingProbe;
  /** A Redis Cluster's primaries without keyspace notifications, as ReadModeProbe last found them. */
  private nodesWithoutNotify = 0;

  constructor(private readonly options: RedisSourceOptions) {
    // A connection lost, or back after a loss, may mean another server behind the target (a
    // promoted replica): what the reader read just before may be gone. Its positions are kept as
    // witnesses before it reads on.
    const reporting: RedisSourceOptions = {
      ...options,
      onError: (operation, error) => {
        if (operation === 'connection') this.suspectLoss();
        options.onError(operation, error);
      },
      onReconnect: (connection) => {
        this.suspectLoss();
        options.onReconnect?.(connection);
      },
    };
    const connections = new TargetConnections(reporting);
    this.command = connections.connect('cmd', { maxRetriesPerRequest: 1, socketTimeout: COMMAND_SOCKET_TIMEOUT_MS });
    const readers = new LiveReaderFactory({
      source: reporting,
      connections,
      command: this.command,
      dropWrongTypes: this.dropWrongTypes,
      suspect: (stream) => this.incarnations.checkSoon(stream),
      vanished: (stream) => this.incarnations.vanished(stream),
      unnotified: () => this.nodesWithoutNotify > 0,
    });
    this.modes = new ReadModeSwitch({
      // A cluster is always read notification-driven; its nodes' settings are only reported.
      requested: connections.cluster ? 'notify' : (options.readMode ?? 'auto'),
      initial: connections.cluster ? 'notify' : 'batch',
      probe: new ReadModeProbe({
        command: this.command,
        onError: (error) => options.onError('config', error),
        onNodesWithoutNotify: (nodes) => {
          this.nodesWithoutNotify = nodes.length;
          options.onNodesWithoutNotify?.(nodes);
        },
      }).probe,
      create: (mode, positions) => readers.create(mode, positions),
      clock: systemClock,
      checkIntervalMs: options.readModeCheckMs ?? 5_000,
      onMode: (mode, previous) => options.onReadMode?.(mode, previous),
    });
    const checkInterval = options.recreationCheckIntervalMs ?? 1_000;
    this.incarnations = new IncarnationTracker({
      probe: redisIncarnationProbe(
        () => this.command,
        (error) => options.onError('check', error),
      ),
      clock: systemClock,
      cursorOf: (stream) => this.live.cursor(stream),
      onNewIncarnation: (stream, cause) => this.restart(stream, cause),
      onError: (error) => options.onError('check', error),
      onCheck: () => options.onRead('check'),
      // In slices of a tenth of the interval, which the tracker sends as one check while no key is
      // seen missing (every wake-up of the loop costs the pod: at 10,000 watched streams ten checks
      // a second were a fifth of an idle relay's CPU) and one by one while some key is, so a key
      // coming back is seen within a slice. Read notification-driven, keyspace events and live
      // messages report most recreations at once (hints), so the round is only the safety net and
      // looks at a tenth as many.
      intervalMs: checkInterval / PERIODIC_SLICES,
      periodicGroupSize: () => (this.modes.mode === 'notify' ? NOTIFY_KEYS_PER_INTERVAL : BATCH_KEYS_PER_INTERVAL) / PERIODIC_SLICES,
      slicesPerRound: PERIODIC_SLICES,
      suspectIntervalMs: checkInterval,
    });
    this.pings = new PingProbe({
      // A Redis Cluster client sends a PING to a random primary: each is probed on its own.
      nodes: () => this.primaries(),
      timeoutMs: options.probeTimeoutMs ?? 2_000,
      now: () => Date.now(),
      onError: (error) => options.onError('ping', error),
    });
    // A server that took another history under open connections (a replica promoted, a full
    // resync) is looked at as after a lost connection: cheaply per node, not per key.
    const replids = new ReplicationIdProbe({
      nodes: () => this.primaries(),
      onChange: () => this.suspectLoss(),
      onError: (error) => options.onError('ping', error),
    });
    this.probeTimer = setInterval(() => {
      this.pings.probe();
      replids.probe();
    }, options.probeIntervalMs ?? 1_000);
    this.probeTimer.unref();
  }

  /**
   * Connected (for a Redis Cluster: its slot map known), and answering PING: the one instance, or
   * at least one primary of a cluster, so one frozen primary does not end the other primaries' streams.
   */
  get healthy(): boolean {
    return this.command.status === 'ready' && this.live.ready && this.pings.answering;
  }

  get unansweredForMs(): number {
    return this.healthy ? 0 : this.pings.silentForMs;
  }

  async inspect(stream: StreamName, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>> {
    const snapshot = this.incarnations.snapshot(stream);
    const replies = await this.transaction((tx) => {
      tx.call('EXISTS', [stream]);
      tx.call('XINFO', ['STREAM', stream]);
      if (probe !== undefined) tx.call('XRANGE', [stream, probe, probe, 'COUNT', 1]);
    });
    if (!replies.ok) return replies;
    this.options.onRead('xinfo');
    const info = this.info(replies.value, stream, snapshot);
    if (!info.ok) return info;
    if (probe === undefined) return { ok: true, value: { info: info.value, probeExists: false } };
    const probeExists = pipelineReply(replies.value, 2, (r) => parseEntries(r).length > 0);
    if (!probeExists.ok) return probeExists;
    return { ok: true, value: { info: info.value, probeExists: probeExists.value } };
  }

  async range(stream: StreamName, after: StreamId, count: number): Promise<SourceResult<RangePage>> {
    const snapshot = this.incarnations.snapshot(stream);
    const replies = await this.transaction((tx) => {
      tx.call('EXISTS', [stream]);
      tx.call('XINFO', ['STREAM', stream]);
      tx.call('XRANGE', [stream, after, after, 'COUNT', 1]);
      // As bytes: parseEntries checks the relayed values are UTF-8 before decoding them.
      tx.callBuffer('XRANGE', [stream, `(${after}`, '+', 'COUNT', count]);
    });
    if (!replies.ok) return replies;
    this.options.onRead('xrange');
    const info = this.info(replies.value, stream, snapshot);
    if (!info.ok) return info;
    const afterExists = pipelineReply(replies.value, 2, (r) => parseEntries(r).length > 0);
    if (!afterExists.ok) return afterExists;
    const entries = pipelineReply(replies.value, 3, parseEntries);
    if (!entries.ok) return entries;
    return { ok: true, value: { entries: entries.value, info: info.value, afterExists: afterExists.value } };
  }

  /** The connections to probe: the one instance when connected, or every primary of a Redis Cluster. */
  private primaries(): Redis[] {
    return isClusterClient(this.command) ? this.command.nodes('master') : this.command.status === 'ready' ? [this.command] : [];
  }

  /** The reader in force; it changes when the read mode does. */
  private get live(): LiveReader {
    return this.modes.reader;
  }

  get readMode(): ReadMode {
    return this.modes.mode;
  }

  /** Settles with the server's first answer about notifications: null if it could not be asked. */
  firstReadModeCheck(): Promise<ReadMode | null> {
    return this.modes.firstCheck;
  }

  watch(stream: StreamName, after: StreamId): void {
    this.live.watch(stream, after);
    this.incarnations.track(stream);
  }

  unwatch(stream: StreamName): void {
    this.incarnations.untrack(stream);
    this.live.unwatch(stream);
  }

  get connectionCount(): number {
    // A Cluster client holds a connection per node it sends to (the primaries).
    return (isClusterClient(this.command) ? this.command.nodes('master').length : 1) + this.live.connectionCount;
  }

  async close(): Promise<void> {
    clearInterval(this.probeTimer);
    this.incarnations.close();
    await this.modes.close();
    this.command.disconnect();
  }

  /**
   * The commands `build` queues, as one MULTI: the existence check, the metadata and the page
   * describe the same moment, so a key deleted in between cannot pass for a missing one.
   */
  private async transaction(build: (tx: ChainableCommander) => void): Promise<SourceResult<PipelineReplies>> {
    try {
      const tx = this.command.multi();
      build(tx);
      return { ok: true, value: (await tx.exec()) ?? [] };
    } catch (thrown) {
      return { ok: false, error: sourceError(toError(thrown)) };
    }
  }

  /**
   * Replies 0 and 1 of a transaction are EXISTS and XINFO STREAM of the key. For a watched key
   * they are also a sighting of its incarnation: a resume after a key was recreated shows it
   * before any periodic check would.
   */
  private info(replies: PipelineReplies, stream: StreamName, snapshot: CheckSnapshot | undefined): SourceResult<StreamInfo | null> {
    const exists = pipelineReply(replies, 0, (r) => parseInteger(r, 'exists') === 1);
    if (!exists.ok) return exists;
    // A missing key makes XINFO answer an error: there is nothing to parse, and nothing wrong.
    const info = exists.value ? pipelineReply(replies, 1, parseXinfo) : { ok: true as const, value: null };
    if (info.ok && snapshot !== undefined) {
      // entries-added is left out: parseXinfo stands the length in for it on servers without it.
      const sighting: KeySighting =
        info.value === null ? { exists: false } : { exists: true, lastGeneratedId: info.value.lastGeneratedId, entriesAdded: null };
      this.incarnations.observe(stream, snapshot, sighting);
    }
    return info;
  }

  /**
   * The servers behind the target may have changed (a connection came back after a loss; on a
   * cluster, a slot's primary was replaced): look at every watched key for entries lost
   * (IncarnationTracker.suspectLoss). Call it before the reader reads from the new server.
   */
  suspectLoss(): void {
    this.incarnations.suspectLoss();
  }

  /** The key holds a new incarnation: its reader starts it over, then its subscribers are told. */
  private restart(stream: StreamName, cause: StreamResetCause): void {
    if (!this.live.restart(stream)) return;
    this.options.onRecreated?.(stream, cause);
    this.options.listener.reset(stream);
  }

  /** Finds the keys that made a batched XREAD fail with WRONGTYPE and takes them out of reading. */
  private readonly dropWrongTypes = async (keys: readonly StreamName[]): Promise<readonly StreamName[]> => {
    try {
      const calls = keys.map((key) => ({ key, command: 'TYPE', args: [key] }));
      const replies = await pipelineByNode(this.command, calls, (error) => this.options.onError('type', error));
      const bad = keys.filter((_, i) => {
        const type = pipelineReply(replies, i, parseTypeName);
        return type.ok && type.value !== 'stream' && type.value !== 'none';
      });
      for (const stream of bad) {
        this.live.forget(stream);
        this.incarnations.untrack(stream);
        this.options.listener.failed(stream, { code: 'source_wrong_type', retryable: false, message: 'the key is not a stream' });
      }
      return bad;
    } catch (thrown) {
      this.options.onError('type', toError(thrown));
      return [];
    }
  };
}
