import { describe, expect, it } from 'vitest';
import { spawnTsEntry } from '@streamgate/testkit';

describe('npm run fleet', () => {
  it('brings up Redis, auth, two relays and a publisher, and its tail sees demo events through a relay', async () => {
    const fleet = await spawnTsEntry('scripts/fleet.ts', {
      name: 'fleet',
      env: { FLEET_EXIT_AFTER_EVENTS: '3' },
      readyPattern: /fleet up/,
      readyTimeoutMs: 60_000,
    });
    await using _ = fleet;
    // The tail subscribes fresh, so under load it may first see any seq; it exits after three.
    await fleet.waitForLine(/tail\s+subscription closed/, 30_000);
    const output = [...fleet.lines];
    expect(output.filter((l) => /^tail\s+demo:ticks \S+ seq=\d+ /.test(l))).toHaveLength(3);
    expect(output.filter((l) => /^relay-\d ws:\/\/127\.0\.0\.1:\d+\/v1\/ws/.test(l))).toHaveLength(2);
    expect(output.some((l) => l.startsWith('tail    subscription live'))).toBe(true);
    expect(await fleet.exited).toMatchObject({ code: 0 });
  });
});
