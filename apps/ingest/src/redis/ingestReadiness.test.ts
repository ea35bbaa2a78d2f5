import { describe, expect, it } from 'vitest';
import { ingestReadiness } from './ingestReadiness.js';

const targets = ['redis://r0:6379/0', 'redis://r1:6379/0', 'redis://r2:6379/0', 'redis://r3:6379/0'];

describe('ingestReadiness', () => {
  it('stays ready with one target of four down, naming it', () => {
    expect(ingestReadiness(targets, ['redis://r2:6379/0'])).toEqual({
      status: 200,
      body: 'ready\nredis://r0:6379/0 up\nredis://r1:6379/0 up\nredis://r2:6379/0 not ready\nredis://r3:6379/0 up',
    });
    expect(ingestReadiness(targets, []).status).toBe(200);
  });

  it('is unready when no target is ready', () => {
    const answer = ingestReadiness(targets, targets);
    expect(answer.status).toBe(503);
    expect(answer.body.split('\n')[0]).toBe('no redis target ready');
    expect(ingestReadiness(['redis-cluster://c:7000'], ['redis-cluster://c:7000'])).toEqual({
      status: 503,
      body: 'no redis target ready\nredis-cluster://c:7000 not ready',
    });
  });

  it('is unready while the JetStream target the streams are written to is not connected, naming it last', () => {
    const nats = 'nats://n1:4222,n2:4222/STREAMGATE';
    expect(ingestReadiness(['redis://r0:6379/0'], [], { target: nats, connected: true })).toEqual({
      status: 200,
      body: `ready\nredis://r0:6379/0 up\n${nats} up`,
    });
    expect(ingestReadiness(['redis://r0:6379/0'], [], { target: nats, connected: false })).toEqual({
      status: 503,
      body: `jetstream target not connected\nredis://r0:6379/0 up\n${nats} not ready`,
    });
    expect(ingestReadiness(['redis://r0:6379/0'], ['redis://r0:6379/0'], { target: nats, connected: true }).body.split('\n')[0]).toBe(
      'no redis target ready',
    );
  });
});
