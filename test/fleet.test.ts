import { describe, expect, it } from 'vitest';
import { spawnTsEntry, withDeadline } from '@streamgate/testkit';
import type { Service } from '@streamgate/testkit';
import { z } from 'zod';

/** Sends `send` (unless null) and waits for a line printed after that (an older match does not count). */
async function after(fleet: Service, send: string | null, match: RegExp, timeoutMs = 15_000): Promise<string> {
  const fromLine = fleet.lineCount;
  if (send !== null) expect(fleet.write(`${send}\n`)).toBe(true);
  return fleet.waitForLine(match, timeoutMs, { fromLine });
}

const FAST = { FLEET_VIEWERS: '4', FLEET_BLOCK_MS: '500', FLEET_DRAIN_WINDOW_MS: '1000' };

const configSchema = z.object({ authUrl: z.string(), relayUrl: z.string() });

/** The first capture of the first line matching `pattern`. */
function printed(lines: readonly string[], pattern: RegExp): string {
  const match = lines.map((l) => pattern.exec(l)).find((m) => m !== null);
  if (match?.[1] === undefined) throw new Error(`no line matches ${String(pattern)}:\n${lines.join('\n')}`);
  return match[1];
}

describe('npm run fleet', () => {
  it('runs ingest on the chain and the venue through the relays, and takes fault commands on stdin', async () => {
    const fleet = await spawnTsEntry('scripts/fleet.ts', {
      name: 'fleet',
      env: FAST,
      stdin: true,
      readyPattern: /fleet up/,
      readyTimeoutMs: 60_000,
    });
    await using _ = fleet;
    const startup = [...fleet.lines];
    expect(startup.filter((l) => /^relay-\d ws:\/\/127\.0\.0\.1:\d+\/v1\/ws/.test(l))).toHaveLength(2);
    expect(startup.some((l) => /^ingest\s+http:\/\/127\.0\.0\.1:\d+\/metrics/.test(l))).toBe(true);
    const credential = printed(startup, /^ops\s+.*operator credential \(shown once\): (\S{20,})$/);

    // The dashboard: its URL carries the credential in the fragment; its config names auth and the front door.
    const dashboard = printed(startup, /^dashboard (http:\/\/127\.0\.0\.1:\d+\/)#credential=(?:\S+)$/);
    expect(startup).toContain(`dashboard ${dashboard}#credential=${credential}`);
    const config = configSchema.parse(await (await fetch(`${dashboard}config.json`)).json());
    expect(config).toEqual({
      authUrl: printed(startup, /^auth\s+(http:\/\/\S+)\/trpc /),
      relayUrl: printed(startup, /^relays\s+front door (ws:\/\/\S+) /),
    });
    expect((await fetch(dashboard)).status).toBe(200);
    await fleet.waitForLine(/^commands:$/);

    // The viewers' subscriptions reach ingest as demand: it owns the chain streams and the venue
    // symbols, and the tail reads blocks it wrote through a relay.
    await fleet.waitForLine(/^ingest\s+evm:anvil:heads active$/, 20_000);
    await fleet.waitForLine(/^ingest\s+venue sim: 6\/6 symbols covered on 2 session\(s\)$/, 20_000);
    await after(fleet, null, /^chain\s+evm:anvil:heads block \d+ 0x[0-9a-f]+…$/);

    // Bad input is answered, never fatal.
    await after(fleet, 'bogus', /^fleet\s+unknown command "bogus"; type "help" for the list$/);
    await after(fleet, 'cut nowhere', /^fleet\s+refused: no provider "nowhere" \(providers: primary, secondary\)$/);
    await after(fleet, 'drain', /^fleet\s+usage: drain <relay> \[replace\]$/);

    // A cut provider: the worker fails over to the other one and the chain keeps coming.
    const cutAt = fleet.lineCount;
    await after(fleet, 'cut primary', /^fleet\s+provider primary cut$/);
    await fleet.waitForLine(/^ingest\s+evm:anvil:heads failover primary → secondary/, 15_000, { fromLine: cutAt });
    await after(fleet, null, /^chain\s+evm:anvil:heads block \d+ /);
    await after(fleet, 'restore primary', /^fleet\s+provider primary restored$/);

    // A drained relay: out of the front door, SIGTERM, exits once drained; the tail resumes on the other.
    const drainAt = fleet.lineCount;
    await after(fleet, 'drain relay-0', /^fleet\s+SIGTERM sent to relay-0/);
    await fleet.waitForLine(/^relay-0 exited \(code 0\) after draining$/, 15_000, { fromLine: drainAt });
    await after(fleet, null, /^chain\s+evm:anvil:heads block \d+ /);
    await after(fleet, 'drain relay-1', /^fleet\s+refused: relay-1 is the last serving relay/);

    expect(fleet.write('quit\n')).toBe(true);
    expect(await withDeadline(fleet.exited, 20_000, 'the fleet stops after quit')).toMatchObject({ code: 0 });
    expect(fleet.lines).toContain('fleet stopping');
  });

  it('FLEET_REDIS_CLUSTER=1: the streams on a Redis Cluster reach the tail through the relays, also after a primary is killed', async () => {
    const fleet = await spawnTsEntry('scripts/fleet.ts', {
      name: 'fleet-cluster',
      env: { ...FAST, FLEET_DASHBOARD: 'false', FLEET_REDIS_CLUSTER: '1' },
      stdin: true,
      readyPattern: /fleet up/,
      readyTimeoutMs: 60_000,
    });
    await using _ = fleet;
    const startup = [...fleet.lines];
    expect(
      printed(startup, /^redis\s+streams on the cluster (redis-cluster:\/\/127\.0\.0\.1:\d+); operations stream on redis:\/\//),
    ).toBeTruthy();
    expect(startup.filter((l) => /^redis\s+cluster node 127\.0\.0\.1:\d+ primary$/.test(l))).toHaveLength(3);
    expect(startup.filter((l) => /^redis\s+cluster node 127\.0\.0\.1:\d+ replica$/.test(l))).toHaveLength(3);
    // The publisher's demo events, and ingest's blocks once the relays' demand reached it, both on the cluster.
    await fleet.waitForLine(/^tail\s+demo:ticks \S+ seq=\d+ /, 20_000);
    await fleet.waitForLine(/^ingest\s+evm:anvil:heads active$/, 20_000);
    await after(fleet, null, /^chain\s+evm:anvil:heads block \d+ /);

    // The primary of demo:ticks dies; its replica is promoted and the events come again.
    await after(fleet, 'kill-primary', /^fleet\s+primary 127\.0\.0\.1:\d+ \(serving demo:ticks\) killed/);
    await after(fleet, null, /^tail\s+demo:ticks \S+ seq=\d+ /, 30_000);
    await after(fleet, 'restart-nodes', /^fleet\s+restarted 127\.0\.0\.1:\d+$/);

    expect(fleet.write('quit\n')).toBe(true);
    expect(await withDeadline(fleet.exited, 20_000, 'the fleet stops after quit')).toMatchObject({ code: 0 });
  });

  it('FLEET_EXIT_AFTER_EVENTS: stops by itself once its tail saw that many demo events and blocks through the relays', async () => {
    const fleet = await spawnTsEntry('scripts/fleet.ts', {
      name: 'fleet-smoke',
      env: { ...FAST, FLEET_DASHBOARD: 'false', FLEET_EXIT_AFTER_EVENTS: '3' },
      readyPattern: /fleet up/,
      readyTimeoutMs: 60_000,
    });
    await using _ = fleet;
    expect(await withDeadline(fleet.exited, 30_000, 'the fleet stops by itself')).toMatchObject({ code: 0 });
    const output = [...fleet.lines];
    expect(output.filter((l) => /^tail\s+demo:ticks \S+ seq=\d+ /.test(l)).length).toBeGreaterThanOrEqual(3);
    expect(output.filter((l) => /^chain\s+evm:anvil:heads block \d+ /.test(l)).length).toBeGreaterThanOrEqual(3);
    expect(output.some((l) => l.startsWith('tail    subscription live'))).toBe(true);
    expect(output.some((l) => l.startsWith('tail    subscription closed'))).toBe(true);
  });
});
