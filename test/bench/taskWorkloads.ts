import type { ServerKind } from './loadgen/protocols.js';

/**
 * The product's own shape: many long-lived per-task streams, each read by one subscriber, at a
 * modest total rate, so most streams are quiet at any moment. What it measures is what watching
 * a stream costs Redis and the server when nothing is written to it.
 */
export interface TaskWorkload {
  readonly name: string;
  readonly streams: number;
  /** Events/s over all streams together (round-robin, so each stream gets eventsPerSecond / streams). */
  readonly eventsPerSecond: number;
  /** Subscriptions each socket holds: keeps the socket count far below the file-descriptor limit. */
  readonly subsPerSocket: number;
}

/**
 * A server under test in one configuration: the relay runs once per Redis read mode, and on a
 * JetStream target (the log is nats-server, Redis only its allowlist's): relay-jetstream on one
 * R1 stream of one nats-server, relay-jetstream-r3 on an R3 stream of a 3-node cluster.
 */
export const TASK_SERIES = [
  'relay-batch',
  'relay-notify',
  'relay-jetstream',
  'relay-jetstream-r3',
  'uws-floor',
  'wsrelay',
  'socketio',
] as const;
export type TaskSeries = (typeof TASK_SERIES)[number];

/**
 * Series that run only when BENCH_SERIES names them: the JetStream ones need a nats-server binary,
 * and the floor is a reference for the relay rather than a peer; all came after the default set,
 * whose runs (and their time budget) they would change.
 */
export const OPT_IN_TASK_SERIES: readonly TaskSeries[] = ['relay-jetstream', 'relay-jetstream-r3', 'uws-floor'];

/** Replicas of the JetStream stream a JetStream series may run with (BENCH_JETSTREAM_REPLICAS). */
export const JETSTREAM_REPLICAS = [1, 3] as const;
export type JetStreamReplicas = (typeof JETSTREAM_REPLICAS)[number];

/**
 * The JetStream series of each replica count: BENCH_SERIES names `relay-jetstream`, and
 * BENCH_JETSTREAM_REPLICAS says which of these it runs as. A series of its own per count keeps
 * every result, round and ratio apart, so an R3 sum is never read as an R1 figure.
 */
export const JETSTREAM_SERIES: Readonly<Record<JetStreamReplicas, TaskSeries>> = { 1: 'relay-jetstream', 3: 'relay-jetstream-r3' };

/** What BENCH_SERIES may name: every series but the replica variants BENCH_JETSTREAM_REPLICAS chooses. */
export const NAMED_TASK_SERIES = TASK_SERIES.filter((s) => s !== 'relay-jetstream-r3') as readonly Exclude<
  TaskSeries,
  'relay-jetstream-r3'
>[];

export interface SeriesSetup {
  readonly kind: ServerKind;
  /**
   * The log the entries are written to and read from: a Redis (started with `redisArgs`), or a
   * JetStream stream on a nats-server of its own (startJetStreamTarget), beside a Redis with
   * `redisArgs` that the relay's RELAY_REDIS_ALLOWLIST names and nothing is written to.
   */
  readonly log: 'redis' | 'jetstream';
  /**
   * For a JetStream log: the stream's replicas, each on a nats-server of its own (1: one
   * standalone server; 3: a 3-node cluster, the log's CPU the sum over its three processes).
   */
  readonly jetStreamReplicas?: JetStreamReplicas;
  /** Extra environment of the server process. */
  readonly env: Readonly<Record<string, string>>;
  /** Extra `redis-server` arguments. */
  readonly redisArgs: readonly string[];
}

/** Subscriptions per socket in every task workload (the relay allows 100 by default). */
export const TASK_SUBS_PER_SOCKET = 10;

const STREAM_COUNTS = [1_000, 10_000, 50_000] as const;
const RATES = [1_000, 10_000] as const;

const fmtCount = (n: number): string => n.toLocaleString('en-US');
const fmtPerSecond = (n: number): string => (n >= 1_000 && n % 1_000 === 0 ? `${n / 1_000}k/s` : `${n}/s`);

export function taskWorkloadName(streams: number, eventsPerSecond: number): string {
  return `${fmtCount(streams)} streams × 1 at ${fmtPerSecond(eventsPerSecond)}`;
}

/** Every stream count at every rate: `1,000 streams × 1 at 1k/s` … `50,000 streams × 1 at 10k/s`. */
export const TASK_WORKLOADS: readonly TaskWorkload[] = STREAM_COUNTS.flatMap((streams) =>
  RATES.map((eventsPerSecond) => ({
    name: taskWorkloadName(streams, eventsPerSecond),
    streams,
    eventsPerSecond,
    subsPerSocket: TASK_SUBS_PER_SOCKET,
  })),
);

export function socketCount(w: TaskWorkload): number {
  return Math.ceil(w.streams / w.subsPerSocket);
}

/** Stream indices of each socket: consecutive streams, each stream on exactly one socket. */
export function taskClients(w: TaskWorkload): number[][] {
  return Array.from({ length: socketCount(w) }, (_, c) =>
    Array.from({ length: Math.min(w.subsPerSocket, w.streams - c * w.subsPerSocket) }, (_j, j) => c * w.subsPerSocket + j),
  );
}

/**
 * How each series is started. The relay's "before" is today's batched XREAD reader with Redis
 * not notifying; "after" reads on keyspace notifications (`K` keyspace channel, `t` stream
 * commands). The peers run against a Redis that does not notify: notifying costs every XADD.
 */
export function seriesSetup(series: TaskSeries, maxClients: number): SeriesSetup {
  switch (series) {
    case 'relay-batch':
      return { kind: 'relay', log: 'redis', env: { RELAY_READ_MODE: 'batch' }, redisArgs: [] };
    case 'relay-notify':
      return { kind: 'relay', log: 'redis', env: { RELAY_READ_MODE: 'notify' }, redisArgs: ['--notify-keyspace-events', 'Kt'] };
    case 'relay-jetstream':
    case 'relay-jetstream-r3':
      // The relay as configured for production beside a JetStream target; its Redis carries no stream.
      return {
        kind: 'relay',
        log: 'jetstream',
        jetStreamReplicas: series === 'relay-jetstream' ? 1 : 3,
        env: { RELAY_READ_MODE: 'notify' },
        redisArgs: ['--notify-keyspace-events', 'Kt'],
      };
    case 'uws-floor':
      // The relay's live path with nothing of the relay's own (servers/uwsRedisFeed.ts): written
      // by createPublisher, read from the live channels beside the keyspace ones, as the relay is.
      return { kind: 'uwsfloor', log: 'redis', env: {}, redisArgs: ['--notify-keyspace-events', 'Kt'] };
    case 'wsrelay':
      // One Redis connection per stream: Redis's default of 10,000 clients would refuse the last ones.
      return { kind: 'wsrelay', log: 'redis', env: {}, redisArgs: ['--maxclients', String(maxClients)] };
    case 'socketio':
      return { kind: 'socketio', log: 'redis', env: {}, redisArgs: [] };
  }
}

/**
 * How each server of the fan-out, memory and storm parts is started: the relay as documented for
 * production (docs/protocol.md §11: its Redis with `notify-keyspace-events Kt`, read mode
 * notify), the peers against a Redis that does not notify, since notifying costs their XADDs.
 */
export function serverSetup(kind: ServerKind): Pick<SeriesSetup, 'env' | 'redisArgs'> {
  // The floor reads the relay's channels off a Redis set up as the relay's.
  if (kind === 'uwsfloor') return { env: {}, redisArgs: seriesSetup('uws-floor', 0).redisArgs };
  if (kind !== 'relay') return { env: {}, redisArgs: [] };
  const { env, redisArgs } = seriesSetup('relay-notify', 0);
  return { env, redisArgs };
}

/**
 * The series of the chosen servers, in TASK_SERIES order: those of `chosen` (BENCH_SERIES), or
 * without it every series but the opt-in ones.
 */
export function seriesOf(servers: readonly ServerKind[], chosen: readonly TaskSeries[] | null = null): TaskSeries[] {
  return TASK_SERIES.filter(
    (s) => servers.includes(seriesSetup(s, 0).kind) && (chosen === null ? !OPT_IN_TASK_SERIES.includes(s) : chosen.includes(s)),
  );
}

/** File descriptors kept for listeners, logs, the publisher and Redis's own. */
const FD_HEADROOM = 200;

/**
 * Why a series cannot run a workload on this machine, or null when it can. The hand-written ws
 * relay holds one blocking connection per stream: in its own process (beside the sockets) and
 * in Redis, which lowers its client limit to the descriptor limit less 32.
 */
export function infeasibleReason(series: TaskSeries, w: TaskWorkload, fdLimit: number): string | null {
  const serverFds = socketCount(w) + (series === 'wsrelay' ? w.streams : 0) + FD_HEADROOM;
  if (serverFds > fdLimit)
    return series === 'wsrelay'
      ? `one Redis connection per stream: ${fmtCount(w.streams)} connections and ${fmtCount(socketCount(w))} sockets exceed the ${fmtCount(fdLimit)} file-descriptor limit`
      : `${fmtCount(socketCount(w))} sockets exceed the ${fmtCount(fdLimit)} file-descriptor limit`;
  return null;
}

/** The soft `Max open files` limit from /proc/<pid>/limits text; null when absent or unlimited. */
export function parseFdLimit(limitsText: string): number | null {
  const match = /^Max open files\s+(\d+|unlimited)\s/m.exec(limitsText);
  if (match === null || match[1] === 'unlimited') return null;
  return Number(match[1]);
}

/**
 * When series `index` of `count` must stop starting workloads: each gets an equal share of the
 * budget [start, end), and what an earlier series left unused passes on to the later ones, so the
 * last series is never starved by the first.
 */
export function seriesDeadline(start: number, end: number, index: number, count: number): number {
  return start + ((end - start) * (index + 1)) / Math.max(1, count);
}
