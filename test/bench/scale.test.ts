import { describe, expect, it } from 'vitest';
import { parseBenchEnv } from './scale.js';
import { seriesOf } from './taskWorkloads.js';

describe('BENCH_JETSTREAM_REPLICAS', () => {
  it('runs the JetStream series on one R1 server by default', () => {
    const o = parseBenchEnv({ BENCH_SERIES: 'relay-notify,relay-jetstream' });
    expect(o.jetStreamReplicas).toEqual([1]);
    expect(o.series).toEqual(['relay-notify', 'relay-jetstream']);
  });

  it('runs it as relay-jetstream-r3 on a 3-node cluster with 3', () => {
    const o = parseBenchEnv({ BENCH_SERIES: 'relay-notify,relay-jetstream', BENCH_JETSTREAM_REPLICAS: '3' });
    expect(o.jetStreamReplicas).toEqual([3]);
    expect(o.series).toEqual(['relay-notify', 'relay-jetstream-r3']);
    expect(seriesOf(['relay'], o.series)).toEqual(['relay-notify', 'relay-jetstream-r3']);
  });

  it('runs R1 and R3 side by side with 1,3, each as a series of its own, in TASK_SERIES order', () => {
    for (const replicas of ['1,3', ' 3 , 1 ', '1,3,3']) {
      const o = parseBenchEnv({ BENCH_SERIES: 'relay-jetstream, relay-notify', BENCH_JETSTREAM_REPLICAS: replicas });
      expect(new Set(o.jetStreamReplicas)).toEqual(new Set([1, 3]));
      expect(o.jetStreamReplicas).toHaveLength(2);
      expect(seriesOf(['relay'], o.series)).toEqual(['relay-notify', 'relay-jetstream', 'relay-jetstream-r3']);
    }
  });

  it('refuses any other replica count or form, naming the variable and what it takes', () => {
    for (const bad of ['0', '2', '5', 'three', '', '1;3', '1,', ',3', '13', '-3', '3.0'])
      expect(() => parseBenchEnv({ BENCH_SERIES: 'relay-jetstream', BENCH_JETSTREAM_REPLICAS: bad }), bad).toThrow(
        /BENCH_JETSTREAM_REPLICAS must be 1, 3 or 1,3/,
      );
  });

  it('is refused when no JetStream series runs, rather than measuring something else unnoticed', () => {
    for (const env of [{ BENCH_JETSTREAM_REPLICAS: '3' }, { BENCH_SERIES: 'relay-notify', BENCH_JETSTREAM_REPLICAS: '3' }])
      expect(() => parseBenchEnv(env)).toThrow(/BENCH_JETSTREAM_REPLICAS=3 applies to the relay-jetstream series.*BENCH_SERIES/);
  });

  it('keeps the R3 series out of BENCH_SERIES: the replica count is said once, by BENCH_JETSTREAM_REPLICAS', () => {
    expect(() => parseBenchEnv({ BENCH_SERIES: 'relay-jetstream-r3' })).toThrow(
      /BENCH_SERIES=relay-batch,relay-notify,relay-jetstream,uws-floor,wsrelay,socketio/,
    );
  });

  it('names the variable in the list of what the bench takes', () => {
    expect(() => parseBenchEnv({ BENCH_PIN: 'yes' })).toThrow(/BENCH_JETSTREAM_REPLICAS=1\|3\|1,3/);
  });
});

describe('BENCH_SERVERS', () => {
  it('compares the four servers by default, and runs the floor of the live path only when named', () => {
    expect(parseBenchEnv({}).servers).toEqual(['relay', 'socketio', 'wsrelay', 'uws']);
    expect(parseBenchEnv({ BENCH_SERVERS: 'relay,uwsfloor,socketio' }).servers).toEqual(['relay', 'uwsfloor', 'socketio']);
  });
});
