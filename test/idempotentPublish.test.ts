import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineStream } from '@streamgate/protocol';
import { createPublisher } from '@streamgate/server';
import type { PublishResult } from '@streamgate/server';
import { DeadlineError, startRedis, waitFor, withDeadline } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';

// Publishes against a real redis-server that the test freezes (SIGSTOP): the XADD reaches the
// server's socket, the publish gets no reply, and Redis applies the command when it resumes.
// That is the case a retry cannot tell apart from "never written".

const jobs = defineStream('jobs', z.object({ step: z.number() }));

/** The publish's result if it settles within `ms`, else 'pending' (the publish keeps running). */
async function settleWithin(publish: Promise<PublishResult>, ms: number): Promise<PublishResult | 'pending'> {
  try {
    return await withDeadline(publish, ms, 'publish settles');
  } catch (error) {
    if (error instanceof DeadlineError) return 'pending';
    throw error;
  }
}

describe('publishing while Redis is frozen (cross-process, SIGSTOP / SIGCONT)', () => {
  let server: RedisServer;

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    server?.service?.signal('SIGCONT');
    await server?.stop();
  });

  /** Runs `during` with Redis frozen, and always resumes it. */
  async function frozen<T>(during: () => Promise<T>): Promise<T> {
    const service = server.service;
    if (service === undefined) throw new Error('redis-server is not running');
    expect(service.signal('SIGSTOP')).toBe(true);
    try {
      return await during();
    } finally {
      service.signal('SIGCONT');
    }
  }

  it('a publish that timed out, retried with its idempotency key, leaves exactly one entry: the one the retry names', async () => {
    const redis = server.client();
    const publisher = createPublisher({ redis, timeoutMs: 500 });
    expect((await publisher.publish(jobs.for('warm'), { step: 0 })).ok).toBe(true);
    const stream = jobs.for('keyed');

    const first = await frozen(() => settleWithin(publisher.publish(stream, { step: 1 }, { idempotencyKey: 'job-7:step-1' }), 5_000));
    expect(first).toMatchObject({ ok: false, error: { code: 'timeout', retryable: true, written: 'unknown' } });

    const retry = await publisher.publish(stream, { step: 1 }, { idempotencyKey: 'job-7:step-1' });
    if (!retry.ok) throw new Error(`retry failed: ${retry.error.code}: ${retry.error.message}`);
    // The frozen XADD was applied on resume; the retry found its record instead of writing.
    expect(retry.duplicate).toBe(true);
    const ids = (await redis.xrange(stream.name, '-', '+')).map(([id]) => id);
    expect(ids).toEqual([retry.id]);
    await publisher.close();
  });

  it('without a key, the same retry writes a second entry (the reason keys exist)', async () => {
    const redis = server.client();
    const publisher = createPublisher({ redis, timeoutMs: 500 });
    expect((await publisher.publish(jobs.for('warm'), { step: 0 })).ok).toBe(true);
    const stream = jobs.for('unkeyed');

    const first = await frozen(() => settleWithin(publisher.publish(stream, { step: 1 }), 5_000));
    expect(first).toMatchObject({ ok: false, error: { code: 'timeout', retryable: true, written: 'unknown' } });

    const retry = await publisher.publish(stream, { step: 1 });
    if (!retry.ok) throw new Error(`retry failed: ${retry.error.code}: ${retry.error.message}`);
    const ids = (await redis.xrange(stream.name, '-', '+')).map(([id]) => id);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(retry.id);
    await publisher.close();
  });

  it('a connection that drops under an unanswered XADD never makes the client library resend it', async () => {
    // socketTimeout makes ioredis give up on the silent socket and reconnect, the moment its
    // default settings would resend the in-flight XADD that Redis applies when it resumes.
    const template = server.client({ socketTimeout: 300 });
    const publisher = createPublisher({ redis: template, timeoutMs: 5_000 });
    expect((await publisher.publish(jobs.for('warm'), { step: 0 })).ok).toBe(true);
    const stream = jobs.for('dropped');

    let publish: Promise<PublishResult> | undefined;
    const early = await frozen(() => {
      publish = publisher.publish(stream, { step: 1 });
      return settleWithin(publish, 3_000);
    });
    if (publish === undefined) throw new Error('the publish was never started');

    // Once a probe gets through, the reconnected connection has sent whatever it was going to.
    await waitFor(async () => (await publisher.publish(jobs.for('probe'), { step: 0 })).ok, {
      timeoutMs: 20_000,
      message: 'the publisher reconnects after Redis resumes',
    });
    const late = await withDeadline(publish, 20_000, 'the dropped publish settles');
    const redis = server.client();
    const entries = await redis.xlen(stream.name);
    expect({ early: early === 'pending' ? 'pending' : early.ok ? 'ok' : early.error.code, entries }).toEqual({
      early: 'redis_unavailable',
      entries: 1,
    });
    expect(late).toMatchObject({ ok: false, error: { retryable: true, written: 'unknown' } });
    await publisher.close();
  });
});
