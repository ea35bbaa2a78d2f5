import { afterAll, beforeAll } from 'vitest';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { spawnAuth, spawnRelay, startRedis, waitFor } from '@streamgate/testkit';
import type { AppProcess, RedisServer } from '@streamgate/testkit';
import type { DemoRouter } from '@streamgate/auth';
import { generateSigningKey } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';

export const AUDIENCE = 'streamgate-relay';
export const ISSUER = 'streamgate-auth-test';

export interface FleetRelay extends AppProcess {
  readonly url: string;
  metrics(): Promise<string>;
}

export interface Fleet extends AsyncDisposable {
  readonly redis: RedisServer;
  readonly auth: AppProcess;
  readonly authUrl: string;
  readonly relays: FleetRelay[];
  readonly trpc: ReturnType<typeof createTRPCClient<DemoRouter>>;
  /** The auth service's signing key, so tests can mint tokens it would never issue. */
  readonly signingKey: PrivateJwk;
  startRelay(env?: Record<string, string>): Promise<FleetRelay>;
  stop(): Promise<void>;
}

/** Sums every sample of a Prometheus metric family in a text exposition. */
export function metricValue(text: string, name: string, labels?: string): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(' ') || rest.startsWith('{'))) continue;
    if (labels !== undefined && !rest.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

/**
 * A real fleet on loopback: redis-server, the auth service and relay processes, each its own
 * process on a port the kernel chose. Relays trust the auth service's JWKS over HTTP.
 */
export interface FleetOptions {
  relays?: number;
  relayEnv?: Record<string, string>;
  authEnv?: Record<string, string>;
  /** Extra redis-server arguments, e.g. persistence for restart tests. */
  redisArgs?: readonly string[];
}

export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const redis = await startRedis(options.redisArgs === undefined ? {} : { args: options.redisArgs });
  const signingKey = await generateSigningKey('ES256', 'test-key-1');
  const auth = await spawnAuth({
    issuer: ISSUER,
    audience: AUDIENCE,
    redisUrl: redis.url,
    signingKeys: JSON.stringify([signingKey]),
    env: { NODE_ENV: 'test', AUTH_DEMO_ROUTER: 'true', ...options.authEnv },
  });
  const relays: FleetRelay[] = [];

  const startRelay = async (env: Record<string, string> = {}): Promise<FleetRelay> => {
    const name = `relay-${relays.length}`;
    const relay = await spawnRelay({
      name,
      authUrl: auth.httpUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      redisAllowlist: redis.url,
      // A relay stopped with clients still on it drains them first; in tests, briefly.
      env: { RELAY_DRAIN_WINDOW_MS: '1000', ...options.relayEnv, ...env },
    });
    await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      message: `${name} never became ready`,
    });
    const withMetrics: FleetRelay = { ...relay, metrics: async () => (await fetch(`${relay.httpUrl}/metrics`)).text() };
    relays.push(withMetrics);
    return withMetrics;
  };

  for (let i = 0; i < (options.relays ?? 1); i++) await startRelay();
  const trpc = createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: `${auth.httpUrl}/trpc`, maxURLLength: 4_000 })] });

  const stop = async (): Promise<void> => {
    await Promise.allSettled(relays.map((r) => r.service.stop()));
    await auth.service.stop();
    await redis.stop();
  };
  return { redis, auth, authUrl: auth.httpUrl, relays, trpc, signingKey, startRelay, stop, [Symbol.asyncDispose]: stop };
}

/** Starts a fleet before the file's tests and stops it after them; read it inside tests. */
export function useFleet(options: FleetOptions = {}): () => Fleet {
  let fleet: Fleet | undefined;
  beforeAll(async () => {
    fleet = await startFleet(options);
  });
  afterAll(async () => {
    await fleet?.stop();
  });
  return () => {
    if (fleet === undefined) throw new Error('fleet not started');
    return fleet;
  };
}
