import { describe, expect, it } from 'vitest';
import { MAX_ENTRY_DATA_BYTES } from '@streamgate/protocol';
import { parseRelayConfig } from './config.js';

const base = {
  RELAY_JWKS_URL: 'http://auth:8080/.well-known/jwks.json',
  RELAY_TOKEN_AUDIENCE: 'relay',
  RELAY_TOKEN_ISSUER: 'auth',
  RELAY_REDIS_ALLOWLIST: 'redis://redis:6379',
};

function entryLimit(env: Record<string, string>): number {
  const result = parseRelayConfig({ ...base, ...env });
  if (!result.ok) throw new Error(result.error.message);
  return result.config.RELAY_MAX_ENTRY_BYTES;
}

function problem(env: Record<string, string>): string {
  const result = parseRelayConfig({ ...base, ...env });
  if (result.ok) throw new Error('expected a configuration error');
  return result.error.problems.map((p) => p.message).join('\n');
}

describe('RELAY_MAX_ENTRY_BYTES', () => {
  it('defaults to the publisher limit, or to what the send-buffer limits leave room for', () => {
    expect(entryLimit({})).toBe(MAX_ENTRY_DATA_BYTES);
    // 256 KiB cut, 64 KiB pending: a catch-up frame must fit in the 192 KiB between, less the frame's own bytes.
    expect(entryLimit({ RELAY_MAX_BACKPRESSURE_BYTES: String(256 * 1024), RELAY_MAX_PENDING_CATCHUP_BYTES: String(64 * 1024) })).toBe(
      192 * 1024 - 1024,
    );
    expect(entryLimit({ RELAY_MAX_ENTRY_BYTES: '2048' })).toBe(2048);
  });

  it('refuses a limit a catch-up frame could pass the slow-consumer cut with, naming the bound', () => {
    expect(problem({ RELAY_MAX_ENTRY_BYTES: String(1024 * 1024) })).toContain(
      `RELAY_MAX_ENTRY_BYTES="1048576": is above RELAY_MAX_BACKPRESSURE_BYTES − RELAY_MAX_PENDING_CATCHUP_BYTES − 1024 (${1024 * 1024 - 256 * 1024 - 1024})`,
    );
    // Pending equal to the cut leaves no room for any entry.
    expect(problem({ RELAY_MAX_BACKPRESSURE_BYTES: '65536', RELAY_MAX_PENDING_CATCHUP_BYTES: '65536' })).toContain(
      'RELAY_MAX_PENDING_CATCHUP_BYTES="65536": leaves no RELAY_MAX_ENTRY_BYTES of at least 1024 at or below RELAY_MAX_BACKPRESSURE_BYTES − RELAY_MAX_PENDING_CATCHUP_BYTES − 1024 (-1024)',
    );
    expect(problem({ RELAY_MAX_ENTRY_BYTES: '100' })).toContain('RELAY_MAX_ENTRY_BYTES');
  });
});
