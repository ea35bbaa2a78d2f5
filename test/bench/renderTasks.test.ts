import { describe, expect, it } from 'vitest';
import { aggregateRounds } from './aggregateRounds.js';
import type { StepResult } from './fanoutBench.js';
import { redisGrowth, renderTasksMarkdown, renderTasksSvg } from './renderTasks.js';
import type { TaskResult } from './tasksBench.js';
import type { TaskSeries } from './taskWorkloads.js';

const step = { p50Ms: 3, p99Ms: 40, deliveredRatio: 0.9995 } as const;

function result(
  series: TaskSeries,
  streams: number,
  eventsPerSecond: number,
  redisUs: number | null,
  skipped: string | null = null,
): TaskResult {
  const s: StepResult | null =
    redisUs === null
      ? null
      : {
          ...step,
          rate: eventsPerSecond,
          eventsPerSecond,
          expected: 5_000,
          received: 4_998,
          achieved: eventsPerSecond,
          maxMs: 50,
          serverCpu: 0.2,
          redisCpu: 0.1,
          loadCpu: 0.1,
          serverUsPerDelivery: 30,
          pass: true,
        };
  return {
    series,
    workload: `${streams.toLocaleString('en-US')} streams × 1 at ${eventsPerSecond / 1000}k/s`,
    streams,
    eventsPerSecond,
    sockets: streams / 10,
    skipped,
    openFailed: 0,
    step: s,
    redisUsPerEntry: redisUs,
    serverUsPerEntry: redisUs === null ? null : 50,
  };
}

const results: TaskResult[] = [
  result('relay-batch', 1_000, 1_000, 170),
  result('relay-batch', 10_000, 1_000, 480),
  result('relay-batch', 50_000, 1_000, 900),
  result('relay-notify', 1_000, 1_000, 70),
  result('relay-notify', 10_000, 1_000, 72),
  result('relay-notify', 50_000, 1_000, 77),
  result('wsrelay', 50_000, 1_000, null, 'one Redis connection per stream: too many'),
];

describe('redisGrowth', () => {
  it('divides the cost at the most streams by the cost at the fewest', () => {
    expect(redisGrowth(results, 'relay-notify', 1_000)).toBeCloseTo(1.1);
    expect(redisGrowth(results, 'relay-batch', 1_000)).toBeCloseTo(900 / 170);
  });

  it('has no growth with fewer than two measured points', () => {
    expect(redisGrowth(results, 'wsrelay', 1_000)).toBeNull();
    expect(redisGrowth(results, 'relay-notify', 10_000)).toBeNull();
  });
});

describe('renderTasksMarkdown', () => {
  it('writes one row per workload and series, and why a series did not run', () => {
    const md = renderTasksMarkdown(results, 5_000).join('\n');
    expect(md).toContain('5 s per workload after a warm-up');
    expect(md).toContain(
      '| 1,000 streams × 1 at 1k/s | streamgate relay, keyspace notifications | 100 | 70.0 | 50.0 | 3.0 / 40.0 | — | 99.95% |',
    );
    expect(md).toContain(
      '| 50,000 streams × 1 at 1k/s | ws + ioredis relay | 5,000 | not run: one Redis connection per stream: too many | | | | |',
    );
    expect(md).toContain('streamgate relay, keyspace notifications at 1,000/s 1.10×');
  });

  it('shows the p99 from the write where the frames carried ids', () => {
    const r = result('relay-notify', 10_000, 1_000, 80);
    if (r.step === null) throw new Error('the fixture has a step');
    const md = renderTasksMarkdown([{ ...r, step: { ...r.step, fromWriteP99Ms: 4.56 } }], 5_000).join('\n');
    expect(md).toMatch(/\| 3\.0 \/ 40\.0 \| 4\.6 \| 99\.95% \|$/m);
  });

  it('gives the JetStream series no p99 from the write (its ids carry no time), and names the log column for both logs', () => {
    const r = result('relay-jetstream', 10_000, 1_000, 90);
    if (r.step === null) throw new Error('the fixture has a step');
    // A time read from a `0-<seq>` id (now − 0) is not a latency, whatever an older run recorded.
    const md = renderTasksMarkdown(
      [result('relay-notify', 10_000, 1_000, 80), { ...r, step: { ...r.step, fromWriteP99Ms: 1.7e12 } }],
      5_000,
    ).join('\n');
    expect(md).toContain(
      '| 10,000 streams × 1 at 1k/s | streamgate relay, JetStream (R1) | 1,000 | 90.0 | 50.0 | 3.0 / 40.0 | — | 99.95% |',
    );
    expect(md).toContain('| workload | server | sockets | log (Redis or nats-server) µs/entry |');
    expect(md).toContain('its nats-server, with its publishes, in the log column');
    expect(renderTasksMarkdown(results, 5_000).join('\n')).toContain('| workload | server | sockets | Redis µs/entry |');
  });

  it('labels the R3 series and the log column as three nats-servers summed, apart from R1', () => {
    const md = renderTasksMarkdown(
      [
        result('relay-notify', 10_000, 1_000, 80),
        result('relay-jetstream', 10_000, 1_000, 90),
        result('relay-jetstream-r3', 10_000, 1_000, 300),
      ],
      5_000,
    ).join('\n');
    expect(md).toContain(
      '| 10,000 streams × 1 at 1k/s | streamgate relay, JetStream R3 (3 nodes, log CPU summed) | 1,000 | 300.0 | 50.0 | 3.0 / 40.0 | — | 99.95% |',
    );
    expect(md).toContain('| 10,000 streams × 1 at 1k/s | streamgate relay, JetStream (R1) | 1,000 | 90.0 |');
    expect(md).toContain('| workload | server | sockets | log (Redis or nats-server, R3: 3 nats-servers summed) µs/entry |');
    expect(md).toContain('JetStream R3: the sum over its 3 nats-servers');
    // Without an R3 row the header and the note stay as before.
    const r1Only = renderTasksMarkdown([result('relay-jetstream', 10_000, 1_000, 90)], 5_000).join('\n');
    expect(r1Only).not.toContain('R3');
  });

  it('renders nothing for a run without task workloads', () => {
    expect(renderTasksMarkdown([], undefined)).toEqual([]);
  });
});

describe('renderTasksMarkdown with rounds', () => {
  function rounded(series: TaskSeries, values: readonly (readonly [number, number])[], received = 4_998): TaskResult {
    const rounds = values.map(([server, redis], round) => {
      const r = result(series, 10_000, 1_000, redis);
      if (r.step === null) throw new Error('the fixture has a step');
      return { ...r, serverUsPerEntry: server, step: { ...r.step, received, p99Ms: server / 10 }, round, position: 0 };
    });
    return aggregateRounds(rounds);
  }
  const relay = rounded('relay-notify', [
    [100, 60],
    [140, 70],
    [120, 80],
  ]);
  const socketio = rounded(
    'socketio',
    [
      [200, 100],
      [160, 100],
      [300, 100],
    ],
    4_900,
  );

  it('shows the medians in the same table, with the median round’s latency and the share over all rounds', () => {
    const md = renderTasksMarkdown([relay, socketio], 5_000, 3).join('\n');
    expect(md).toContain('3 rounds, the series alternating within each workload');
    expect(md).toContain(
      '| 10,000 streams × 1 at 1k/s | streamgate relay, keyspace notifications | 1,000 | 70.0 | 120.0 | 3.0 / 12.0 | — | 99.96% |',
    );
    expect(md).toContain('| 10,000 streams × 1 at 1k/s | Socket.IO 4 + redis-streams | 1,000 | 100.0 | 200.0 | 3.0 / 20.0 | — | 98.00% |');
  });

  it('adds relay ÷ Socket.IO of the medians and the range of the paired rounds', () => {
    const md = renderTasksMarkdown([relay, socketio], 5_000, 3).join('\n');
    expect(md).toContain(
      '- 10,000 streams × 1 at 1k/s, streamgate relay, keyspace notifications ÷ Socket.IO 4 + redis-streams: ' +
        'server µs/entry 0.60× (rounds 0.40–0.88×), Redis µs/entry 0.70× (rounds 0.60–0.80×); 3 paired rounds',
    );
  });

  it('says when the budget left a series fewer rounds, and gives no ratio without Socket.IO', () => {
    const md = renderTasksMarkdown([relay], 5_000, 4).join('\n');
    expect(md).toContain('| 1,000 (3 of 4 rounds: time budget spent) |');
    expect(md).not.toContain('Relay ÷ Socket.IO');
  });

  it('adds JetStream ÷ Redis (keyspace notifications) of the log and the relay, paired by round', () => {
    const jetStream = rounded('relay-jetstream', [
      [150, 120],
      [140, 140],
      [160, 160],
    ]);
    const md = renderTasksMarkdown([relay, jetStream], 5_000, 3).join('\n');
    expect(md).toContain(
      '- 10,000 streams × 1 at 1k/s: log µs/entry (nats-server ÷ Redis) 2.00× (rounds 2.00–2.00×), relay µs/entry 1.25× (rounds 1.00–1.50×); 3 paired rounds',
    );
    expect(md).not.toContain('Relay ÷ Socket.IO');
  });

  it('gives R3 ÷ Redis and R3 ÷ R1, naming the R3 log a sum', () => {
    const r1 = rounded('relay-jetstream', [
      [150, 120],
      [140, 140],
      [160, 160],
    ]);
    const r3 = rounded('relay-jetstream-r3', [
      [150, 360],
      [140, 420],
      [160, 480],
    ]);
    const md = renderTasksMarkdown([relay, r1, r3], 5_000, 3).join('\n');
    expect(md).toContain(
      '**streamgate relay, JetStream R3 (3 nodes, log CPU summed) ÷ streamgate relay, keyspace notifications per workload**',
    );
    expect(md).toContain('- 10,000 streams × 1 at 1k/s: log µs/entry (3 nats-servers summed ÷ Redis) 6.00× (rounds 6.00–6.00×)');
    expect(md).toContain('**streamgate relay, JetStream R3 (3 nodes, log CPU summed) ÷ streamgate relay, JetStream (R1) per workload**');
    expect(md).toContain('- 10,000 streams × 1 at 1k/s: log µs/entry (3 nats-servers summed ÷ nats-server) 3.00× (rounds 3.00–3.00×)');
    expect(md).toContain('- 10,000 streams × 1 at 1k/s: log µs/entry (nats-server ÷ Redis) 2.00×');
  });

  it('leaves the one-round table as it was', () => {
    expect(renderTasksMarkdown(results, 5_000, 1)).toEqual(renderTasksMarkdown(results, 5_000));
    expect(renderTasksMarkdown(results, 5_000).join('\n')).not.toContain('rounds');
  });
});

describe('renderTasksSvg', () => {
  it('draws one line per measured series, left to right by streams watched, and skips the unmeasured', () => {
    const svg = renderTasksSvg(results, 'a & b');
    expect(svg).toContain('a &amp; b');
    const paths = [...svg.matchAll(/<path d="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(paths).toHaveLength(2);
    for (const d of paths) {
      const xs = [...d.matchAll(/[ML]([\d.]+),/g)].map((m) => Number(m[1]));
      expect(xs).toHaveLength(3);
      expect([...xs].sort((a, b) => a - b)).toEqual(xs);
    }
    expect(svg).toContain('50,000 streams');
  });
});
