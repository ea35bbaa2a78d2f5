import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { readListeningPort, spawnTsEntry, startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer, Service } from '@streamgate/testkit';
import type { DemoRouter } from '@streamgate/auth';
import { generateSigningKey } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';

export const AUDIENCE = 'streamgate-relay';
export const ISSUER = 'streamgate-auth-test';

export interface RelayProcess {
  readonly service: Service;
  readonly port: number;
  readonly url: string;
  metrics(): Promise<string>;
}

export interface Fleet extends AsyncDisposable {
  readonly redis: RedisServer;
  readonly auth: Service;
  readonly authUrl: string;
  readonly relays: RelayProcess[];
  readonly trpc: ReturnType<typeof createTRPCClient<DemoRouter>>;
  /** The auth service's signing key, so tests can mint tokens it would never issue. */
  readonly signingKey: PrivateJwk;
  startRelay(env?: Record<string, string>): Promise<RelayProcess>;
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
export async function startFleet(options: { relays?: number; relayEnv?: Record<string, string> } = {}): Promise<Fleet> {
  const redis = await startRedis();
  const signingKey = await generateSigningKey('ES256', 'test-key-1');
  const auth = await spawnTsEntry('apps/auth/src/main.ts', {
    name: 'auth',
    env: {
      AUTH_HOST: '127.0.0.1',
      AUTH_PORT: '0',
      AUTH_SIGNING_KEYS: JSON.stringify([signingKey]),
      AUTH_ISSUER: ISSUER,
      AUTH_AUDIENCE: AUDIENCE,
      AUTH_REDIS_URL: redis.url,
      AUTH_TOKEN_TTL_SECONDS: '300',
      LOG_LEVEL: 'info',
      NODE_ENV: 'test',
    },
    readyPattern: /"msg":"listening"/,
    readyTimeoutMs: 30_000,
  });
  const authPort = await readListeningPort(auth);
  const authUrl = `http://127.0.0.1:${authPort}`;
  const relays: RelayProcess[] = [];

  const startRelay = async (env: Record<string, string> = {}): Promise<RelayProcess> => {
    const index = relays.length;
    const service = await spawnTsEntry('apps/relay/src/main.ts', {
      name: `relay-${index}`,
      env: {
        RELAY_HOST: '127.0.0.1',
        RELAY_PORT: '0',
        RELAY_NODE_ID: `relay-${index}`,
        RELAY_JWKS_URL: `${authUrl}/.well-known/jwks.json`,
        RELAY_TOKEN_AUDIENCE: AUDIENCE,
        RELAY_TOKEN_ISSUER: ISSUER,
        RELAY_REDIS_ALLOWLIST: redis.url,
        LOG_LEVEL: 'info',
        ...options.relayEnv,
        ...env,
      },
      readyPattern: /"msg":"listening"/,
      readyTimeoutMs: 30_000,
    });
    const port = await readListeningPort(service);
    const relay: RelayProcess = {
      service,
      port,
      url: `ws://127.0.0.1:${port}/v1/ws`,
      metrics: async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(),
    };
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      message: `relay-${index} never became ready`,
    });
    relays.push(relay);
    return relay;
  };

  for (let i = 0; i < (options.relays ?? 1); i++) await startRelay();
  const trpc = createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: `${authUrl}/trpc`, maxURLLength: 4_000 })] });

  const stop = async (): Promise<void> => {
    await Promise.allSettled(relays.map((r) => r.service.stop()));
    await auth.stop();
    await redis.stop();
  };
  return { redis, auth, authUrl, relays, trpc, signingKey, startRelay, stop, [Symbol.asyncDispose]: stop };
}
