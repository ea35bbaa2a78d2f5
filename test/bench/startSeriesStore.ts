import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { singleTarget } from './BenchTarget.js';
import { jetStreamPublisher } from './jetStreamPublisher.js';
import { pinProcess } from './pinning.js';
import type { Pinning } from './pinning.js';
import { startJetStreamTarget } from './startJetStreamTarget.js';
import type { SessionTarget } from './taskSession.js';
import type { StepDeps, StepResult } from './fanoutBench.js';
import { seriesSetup } from './taskWorkloads.js';
import type { SeriesSetup, TaskSeries } from './taskWorkloads.js';

/**
 * Where one task series' entries live for a whole part: its Redis (with the series' arguments),
 * and for a JetStream series a nats-server beside it. Every process is pinned to the client
 * side's cores when pinned.
 */
export interface SeriesStore {
  readonly series: TaskSeries;
  readonly setup: SeriesSetup;
  /** The series' Redis: its log, or for a JetStream series the one the relay's RELAY_REDIS_ALLOWLIST names. */
  readonly redis: RedisServer;
  /**
   * What the step meters as the log, as the bench's log lines name it: `redis`, `nats-server`
   * (one R1 server), or `nats-server R3 (3 nodes, summed)`.
   */
  readonly logName: string;
  /** What each task session of the series writes to and subscribes on. */
  readonly target: SessionTarget;
  /**
   * The log's processes and, for a Redis, its command counters: what each step meters. One
   * process as StepDeps.redisPid; a replicated JetStream's nodes as cpuGroups, one group per node.
   */
  readonly meter: Pick<StepDeps, 'redisPid' | 'cpuGroups' | 'commandStats'>;
  stop(): Promise<void>;
}

/**
 * The log's cores over a step: its one process's (`redisPid`), or the sum over a replicated
 * JetStream's nodes (its groups): every process a SeriesStore meters is its log's.
 */
export function logCoresOf(step: Pick<StepResult, 'redisCpu' | 'groupCpu'>): number {
  return step.redisCpu + Object.values(step.groupCpu ?? {}).reduce((a, b) => a + b, 0);
}

export async function startSeriesStore(series: TaskSeries, maxClients: number, pinning: Pinning): Promise<SeriesStore> {
  const setup = seriesSetup(series, maxClients);
  const redis = await startRedis({ args: setup.redisArgs });
  const redisPid = redis.service?.pid ?? null;
  if (pinning.pinned && redisPid !== null) pinProcess(redisPid, pinning.plan.clientCpus);
  if (setup.log === 'redis') {
    const target = singleTarget(redis);
    return {
      series,
      setup,
      redis,
      logName: 'redis',
      target,
      meter: { redisPid, commandStats: () => target.commandStats() },
      stop: () => redis.stop(),
    };
  }
  try {
    const replicas = setup.jetStreamReplicas ?? 1;
    const js = await startJetStreamTarget(pinning, replicas);
    const [only] = js.pids;
    return {
      series,
      setup,
      redis,
      logName: replicas === 1 ? 'nats-server' : `nats-server R${replicas} (${js.pids.length} nodes, summed)`,
      target: {
        url: js.url,
        redisUrl: redis.url,
        serverEnv: { RELAY_JETSTREAM_ALLOWLIST: js.url },
        publisher: () => jetStreamPublisher(js.connection, js.stream),
        flush: async () => {
          await js.flush();
          await redis.client().flushall();
        },
        seed: js.seed,
      },
      // A cluster's nodes as groups `nats n1`, `nats n2`…: the step's line and results.json then
      // show each node's share (the stream's leader does more than its followers), and redisPid
      // stays null so that no one node is read as the log.
      meter:
        js.pids.length === 1 && only !== undefined
          ? { redisPid: only }
          : { redisPid: null, cpuGroups: Object.fromEntries(js.pids.map((pid, i) => [`nats n${i + 1}`, [pid]])) },
      stop: async () => {
        await js.stop();
        await redis.stop();
      },
    };
  } catch (error) {
    await redis.stop();
    throw error;
  }
}
