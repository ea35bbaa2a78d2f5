import { describe, expect, it } from 'vitest';
import { chooseWorkloads, parseBenchEnv } from './scale.js';
import {
  infeasibleReason,
  JETSTREAM_SERIES,
  parseFdLimit,
  seriesDeadline,
  seriesOf,
  seriesSetup,
  serverSetup,
  socketCount,
  TASK_SUBS_PER_SOCKET,
  TASK_WORKLOADS,
  taskClients,
  taskWorkloadName,
} from './taskWorkloads.js';
import type { TaskWorkload } from './taskWorkloads.js';

const byName = (name: string): TaskWorkload => {
  const w = TASK_WORKLOADS.find((x) => x.name === name);
  if (w === undefined) throw new Error(`no workload ${name}`);
  return w;
};

describe('TASK_WORKLOADS', () => {
  it('holds every stream count at both rates, named as BENCH_WORKLOAD selects them', () => {
    expect(TASK_WORKLOADS.map((w) => w.name)).toEqual([
      '1,000 streams × 1 at 1k/s',
      '1,000 streams × 1 at 10k/s',
      '10,000 streams × 1 at 1k/s',
      '10,000 streams × 1 at 10k/s',
      '50,000 streams × 1 at 1k/s',
      '50,000 streams × 1 at 10k/s',
    ]);
    expect(taskWorkloadName(50_000, 10_000)).toBe('50,000 streams × 1 at 10k/s');
    expect(taskWorkloadName(100, 500)).toBe('100 streams × 1 at 500/s');
  });

  it('keeps 50,000 subscriptions on 5,000 sockets, far under a 20k descriptor limit', () => {
    const w = byName('50,000 streams × 1 at 10k/s');
    expect(socketCount(w)).toBe(5_000);
    expect(w.subsPerSocket).toBe(TASK_SUBS_PER_SOCKET);
  });
});

describe('taskClients', () => {
  it('puts each stream on exactly one socket, the last socket holding the remainder', () => {
    const w: TaskWorkload = { name: 't', streams: 25, eventsPerSecond: 1, subsPerSocket: 10 };
    const clients = taskClients(w);
    expect(clients.map((c) => c.length)).toEqual([10, 10, 5]);
    expect(clients.flat().sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i));
  });
});

describe('serverSetup', () => {
  it('runs the fan-out relay as documented (Redis notifying Kt, read mode notify), the peers on a silent Redis', () => {
    expect(serverSetup('relay')).toEqual({ env: { RELAY_READ_MODE: 'notify' }, redisArgs: ['--notify-keyspace-events', 'Kt'] });
    for (const kind of ['socketio', 'wsrelay', 'uws'] as const) expect(serverSetup(kind)).toEqual({ env: {}, redisArgs: [] });
  });
});

describe('seriesSetup', () => {
  it('starts the relay in batch mode on a silent Redis, and in notify mode on a Redis notifying Kt', () => {
    expect(seriesSetup('relay-batch', 19_968)).toEqual({ kind: 'relay', log: 'redis', env: { RELAY_READ_MODE: 'batch' }, redisArgs: [] });
    expect(seriesSetup('relay-notify', 19_968)).toEqual({
      kind: 'relay',
      log: 'redis',
      env: { RELAY_READ_MODE: 'notify' },
      redisArgs: ['--notify-keyspace-events', 'Kt'],
    });
  });

  it('reads the JetStream series from a JetStream log, R1 or R3, its relay configured as on Redis', () => {
    expect(seriesSetup('relay-jetstream', 19_968)).toEqual({
      ...seriesSetup('relay-notify', 19_968),
      log: 'jetstream',
      jetStreamReplicas: 1,
    });
    expect(seriesSetup('relay-jetstream-r3', 19_968)).toEqual({
      ...seriesSetup('relay-notify', 19_968),
      log: 'jetstream',
      jetStreamReplicas: 3,
    });
    for (const [replicas, series] of Object.entries(JETSTREAM_SERIES))
      expect(seriesSetup(series, 0).jetStreamReplicas).toBe(Number(replicas));
    for (const series of ['relay-batch', 'relay-notify', 'wsrelay', 'socketio'] as const)
      expect(seriesSetup(series, 19_968).log).toBe('redis');
  });

  it('reads the floor series off a Redis notifying Kt, as the relay-notify series is', () => {
    const floor = seriesSetup('uws-floor', 0);
    expect(floor.kind).toBe('uwsfloor');
    expect(floor.log).toBe('redis');
    expect(floor.redisArgs).toEqual(seriesSetup('relay-notify', 0).redisArgs);
    // The fan-out part starts the floor the same way.
    expect(serverSetup('uwsfloor')).toEqual({ env: {}, redisArgs: floor.redisArgs });
  });

  it("raises Redis's client limit for the ws relay's connection per stream", () => {
    expect(seriesSetup('wsrelay', 19_968).redisArgs).toEqual(['--maxclients', '19968']);
    expect(seriesSetup('socketio', 19_968).redisArgs).toEqual([]);
  });

  it('runs both relay series when the relay is chosen, none for the uWS ceiling (it reads no Redis)', () => {
    expect(seriesOf(['relay'])).toEqual(['relay-batch', 'relay-notify']);
    expect(seriesOf(['uws', 'socketio', 'wsrelay'])).toEqual(['wsrelay', 'socketio']);
    expect(seriesOf(['uws'])).toEqual([]);
    // The floor of the live path is opt-in, as the JetStream series are: it would change the default run.
    expect(seriesOf(['uwsfloor'])).toEqual([]);
    expect(seriesOf(['uwsfloor'], ['uws-floor'])).toEqual(['uws-floor']);
    expect(seriesOf(['uws'], ['uws-floor'])).toEqual([]);
    expect(seriesOf(['relay', 'socketio'], ['relay-notify', 'uws-floor', 'socketio'])).toEqual(['relay-notify', 'socketio']);
  });

  it('runs the JetStream series only when BENCH_SERIES names it, in TASK_SERIES order', () => {
    expect(seriesOf(['relay', 'socketio'])).not.toContain('relay-jetstream');
    expect(seriesOf(['relay', 'socketio'])).not.toContain('relay-jetstream-r3');
    expect(seriesOf(['relay'], ['relay-jetstream-r3', 'relay-notify', 'relay-jetstream'])).toEqual([
      'relay-notify',
      'relay-jetstream',
      'relay-jetstream-r3',
    ]);
    expect(seriesOf(['relay'], ['relay-jetstream', 'relay-notify'])).toEqual(['relay-notify', 'relay-jetstream']);
    expect(seriesOf(['socketio'], ['relay-jetstream', 'socketio'])).toEqual(['socketio']);
  });
});

describe('infeasibleReason', () => {
  it('skips the ws relay where one connection per stream passes the descriptor limit, and no one else', () => {
    expect(infeasibleReason('wsrelay', byName('10,000 streams × 1 at 1k/s'), 20_000)).toBeNull();
    expect(infeasibleReason('wsrelay', byName('50,000 streams × 1 at 1k/s'), 20_000)).toMatch(
      /one Redis connection per stream: 50,000 connections and 5,000 sockets exceed the 20,000 file-descriptor limit/,
    );
    for (const series of ['relay-batch', 'relay-notify', 'socketio'] as const)
      expect(infeasibleReason(series, byName('50,000 streams × 1 at 10k/s'), 20_000)).toBeNull();
  });

  it('skips any server whose sockets alone pass the limit', () => {
    expect(infeasibleReason('relay-notify', byName('50,000 streams × 1 at 1k/s'), 4_000)).toMatch(/5,000 sockets exceed the 4,000/);
  });
});

describe('seriesDeadline', () => {
  it('gives each series its share of the budget, the last one ending at the budget', () => {
    expect([0, 1, 2, 3].map((i) => seriesDeadline(1_000, 5_000, i, 4))).toEqual([2_000, 3_000, 4_000, 5_000]);
    expect(seriesDeadline(0, 100, 0, 0)).toBe(100);
  });
});

describe('parseFdLimit', () => {
  const limits = (value: string): string =>
    `Limit                     Soft Limit           Hard Limit           Units\nMax processes             63704                63704                processes\nMax open files            ${value}                20000                files\n`;

  it('reads the soft limit, and none for unlimited or a missing line', () => {
    expect(parseFdLimit(limits('20000'))).toBe(20_000);
    expect(parseFdLimit(limits('unlimited'))).toBeNull();
    expect(parseFdLimit('Max processes 1 1 processes\n')).toBeNull();
  });
});

describe('workload selection', () => {
  it('takes an exact name over the names containing it', () => {
    const all = [{ name: '1 stream × 1k' }, { name: '1 stream × 10k' }];
    expect(chooseWorkloads(all, '1 stream × 1k')).toEqual([{ name: '1 stream × 1k' }]);
    expect(chooseWorkloads(all, 'stream')).toEqual(all);
    expect(chooseWorkloads(all, undefined)).toEqual(all);
  });

  it('selects one task workload by BENCH_WORKLOAD and no fan-out workload with it', () => {
    const o = parseBenchEnv({ BENCH_PARTS: 'tasks', BENCH_WORKLOAD: '1,000 streams × 1 at 1k/s', BENCH_SERVERS: 'relay' });
    expect([...o.parts]).toEqual(['tasks']);
    expect(o.scale.tasks.workloads.map((w) => w.name)).toEqual(['1,000 streams × 1 at 1k/s']);
    expect(o.scale.fanout).toEqual([]);
    expect(o.pin).toBe('auto');
  });

  it('runs the task workloads by default, and refuses an unknown part or pin mode', () => {
    expect([...parseBenchEnv({}).parts]).toEqual(['fanout', 'memory', 'storm', 'tasks']);
    expect(() => parseBenchEnv({ BENCH_PARTS: 'task' })).toThrow(/BENCH_PARTS=fanout,memory,storm,tasks/);
    expect(() => parseBenchEnv({ BENCH_PIN: 'yes' })).toThrow(/BENCH_PIN=auto\|off/);
  });
});

describe('BENCH_SERIES', () => {
  it('takes the JetStream series beside the others, and none by default', () => {
    expect(parseBenchEnv({ BENCH_SERIES: 'relay-notify, relay-jetstream' }).series).toEqual(['relay-notify', 'relay-jetstream']);
    expect(parseBenchEnv({}).series).toBeNull();
  });

  it('refuses an unknown series, naming every one', () => {
    expect(() => parseBenchEnv({ BENCH_SERIES: 'relay-nats' })).toThrow(
      /BENCH_SERIES=relay-batch,relay-notify,relay-jetstream,uws-floor,wsrelay,socketio/,
    );
  });
});

describe('BENCH_ROUNDS', () => {
  it('is 1 by default, and takes a whole number of rounds', () => {
    expect(parseBenchEnv({}).rounds).toBe(1);
    expect(parseBenchEnv({ BENCH_ROUNDS: '3' }).rounds).toBe(3);
  });

  it('refuses anything else, naming the variable', () => {
    for (const bad of ['0', '-1', '1.5', 'two', ''])
      expect(() => parseBenchEnv({ BENCH_ROUNDS: bad })).toThrow(/BENCH_ROUNDS must be a whole number of rounds, 1 or more/);
  });
});

describe('BENCH_TASK_STEP_MS', () => {
  it('keeps the scale’s step by default, and sets the task step when given', () => {
    expect(parseBenchEnv({}).scale.tasks.stepMs).toBe(5_000);
    expect(parseBenchEnv({ BENCH_TASK_STEP_MS: '30000' }).scale.tasks.stepMs).toBe(30_000);
  });

  it('refuses anything else, naming the variable', () => {
    for (const bad of ['0', '-5', '2.5', 'long', ''])
      expect(() => parseBenchEnv({ BENCH_TASK_STEP_MS: bad })).toThrow(/BENCH_TASK_STEP_MS must be a whole number of milliseconds/);
  });
});
