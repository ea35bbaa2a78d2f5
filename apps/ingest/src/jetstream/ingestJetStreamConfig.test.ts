import { describe, expect, it } from 'vitest';
import { parseIngestConfig } from '../config.js';

const topology = {
  chains: { eth: { providers: [{ id: 'a', wsUrl: 'ws://a:8546', httpUrl: 'http://a:8545' }] } },
  streams: [{ stream: 'evm:eth:heads', chain: 'eth', kind: 'newHeads' }],
};
const env = (over: Record<string, string | undefined>) => ({
  INGEST_REDIS_URL: 'redis://localhost:6379/0',
  INGEST_TOPOLOGY: JSON.stringify(topology),
  ...over,
});

function problems(over: Record<string, string | undefined>): string[] {
  const result = parseIngestConfig(env(over));
  if (result.ok) throw new Error('expected a configuration error');
  expect(result.error).toMatchObject({ code: 'config_invalid', retryable: false });
  return result.error.problems.map((p) => p.message);
}

describe('INGEST_JETSTREAM_TARGET', () => {
  it('takes a target in normal form, with the NATS credentials beside it; unset, the streams stay in Redis', () => {
    const result = parseIngestConfig(
      env({ INGEST_JETSTREAM_TARGET: 'nats://N1,n2:4223', INGEST_NATS_USERNAME: 'ingest', INGEST_NATS_PASSWORD: 's3cret' }),
    );
    if (!result.ok) throw new Error(result.error.message);
    expect(result.config.jetStream).toMatchObject({
      target: 'nats://n1:4222,n2:4223/STREAMGATE',
      address: { servers: ['n1:4222', 'n2:4223'], stream: 'STREAMGATE', tls: false },
      username: 'ingest',
      password: 's3cret',
    });
    // Leases and demand stay on INGEST_REDIS_URL.
    expect(result.config.redis.targets).toEqual(['redis://localhost:6379/0']);
    const plain = parseIngestConfig(env({ INGEST_JETSTREAM_TARGET: ' ' }));
    expect(plain.ok && plain.config.jetStream).toBeUndefined();
  });

  it('refuses what is not a JetStream target, naming the variable, without showing credentials', () => {
    for (const value of ['redis://n1:6379', 'nats://ingest:hunter2@n1:4222/S', 'nats://n1:4222/A.B']) {
      const [message, ...rest] = problems({ INGEST_JETSTREAM_TARGET: value });
      expect(rest).toEqual([]);
      expect(message).toMatch(/^INGEST_JETSTREAM_TARGET=".*": must be a nats:\/\/ or tls:\/\/ JetStream target: .*INGEST_NATS_USERNAME/);
      expect(message).not.toContain('hunter2');
    }
  });

  it('refuses Redis-only settings beside it, each with the reason, all at once', () => {
    const found = problems({
      INGEST_REDIS_URL: '',
      INGEST_REDIS_TARGETS: 'redis://r0:6379/0,redis://r1:6379/0',
      INGEST_JETSTREAM_TARGET: 'nats://n1',
      INGEST_STREAM_MAXLEN: '1000',
      INGEST_DEDUPE_TTL_MS: '60000',
    });
    expect(found).toEqual([
      expect.stringMatching(/^INGEST_REDIS_TARGETS is set: it places streams on several Redis instances, .*set INGEST_REDIS_URL/),
      expect.stringMatching(/^INGEST_STREAM_MAXLEN is set: it trims Redis streams; .*max_msgs_per_subject/),
      expect.stringMatching(/^INGEST_DEDUPE_TTL_MS is set: it is the life of Redis dedupe keys; .*duplicate_window/),
    ]);
  });

  it('refuses NATS credentials without a target, showing no password', () => {
    const found = problems({ INGEST_NATS_USERNAME: 'ingest', INGEST_NATS_PASSWORD: 'hunter2' });
    expect(found).toEqual([
      expect.stringMatching(/^INGEST_NATS_USERNAME is set: .*set INGEST_JETSTREAM_TARGET or unset this/),
      expect.stringMatching(/^INGEST_NATS_PASSWORD is set: /),
    ]);
    expect(found.join('\n')).not.toContain('hunter2');
  });
});
