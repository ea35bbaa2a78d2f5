import { startRedis } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { singleTarget } from './BenchTarget.js';
import { jetStreamPublisher } from './jetStreamPublisher.js';
import { pinProcess } from './pinning.js';
import type { Pinning } from './pinning.js';
import { startJetStreamTarget } from './startJetStreamTarget.js';
import type { SessionTarget } from './taskSession.js';
import type { StepDeps } from './fanoutBench.js';
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
  /** Which process the step meters as the log (StepDeps.redisPid): Redis, or nats-server. */
  readonly logName: 'redis' | 'nats-server';
  /** What each task session of the series writes to and subscribes on. */
  readonly target: SessionTarget;
  /** The log's process and, for a Redis, its command counters: what each step meters. */
  readonly meter: Pick<StepDeps, 'redisPid' | 'commandStats'>;
  stop(): Promise<void>;
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
    const js = await startJetStreamTarget(pinning);
    return {
      series,
      setup,
      redis,
      logName: 'nats-server',
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
      meter: { redisPid: js.pid },
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
