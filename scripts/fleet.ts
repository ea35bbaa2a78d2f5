/**
 * `npm run fleet`: a local streamgate fleet on loopback — redis-server, the auth service, two
 * relay pods, a publisher of demo events and a CLI tail that watches them through the relays
 * with a token from the auth service's tRPC procedure, exactly as a browser would.
 *
 * Environment: FLEET_REDIS_URL to use an existing Redis instead of starting one;
 * FLEET_EXIT_AFTER_EVENTS=N to stop by itself after the tail saw N events (smoke tests).
 */
import WebSocket from 'ws';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { Redis } from 'ioredis';
import { RelayClient } from '@streamgate/client';
import { createPublisher, generateSigningKey } from '@streamgate/server';
import { demoStream } from '@streamgate/auth';
import type { DemoRouter } from '@streamgate/auth';
import { spawnAuth, spawnRelay, startRedis } from '@streamgate/testkit';
import type { RedisServer, Service } from '@streamgate/testkit';

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const exitAfter = Number(process.env.FLEET_EXIT_AFTER_EVENTS ?? '0');
const services: Service[] = [];
let redisServer: RedisServer | null = null;
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    await Promise.allSettled(services.reverse().map((s) => s.stop()));
    await redisServer?.stop();
  }
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

try {
  let redisUrl = process.env.FLEET_REDIS_URL;
  if (redisUrl === undefined) {
    redisServer = await startRedis();
    redisUrl = redisServer.url;
  }
  say(`redis   ${redisUrl}`);

  // A key made at boot: development only. Production gives auth its key from a Secret.
  const key = await generateSigningKey('ES256', `fleet-${Date.now()}`);
  const auth = await spawnAuth({
    issuer: 'streamgate-fleet',
    audience: 'streamgate-relay',
    redisUrl,
    signingKeys: JSON.stringify([key]),
    env: { AUTH_DEMO_ROUTER: 'true' }, // the tail below asks the demo router for its token
    ...(process.env.FLEET_AUTH_PORT === undefined ? {} : { port: Number(process.env.FLEET_AUTH_PORT) }),
  });
  services.push(auth.service);
  say(`auth    ${auth.httpUrl}/trpc   JWKS ${auth.httpUrl}/.well-known/jwks.json`);

  const relayUrls: string[] = [];
  for (let i = 0; i < 2; i++) {
    const relay = await spawnRelay({
      name: `relay-${i}`,
      authUrl: auth.httpUrl,
      issuer: 'streamgate-fleet',
      audience: 'streamgate-relay',
      redisAllowlist: redisUrl,
      // Production drains over 15 minutes; a local fleet stopped with Ctrl-C should not.
      env: { RELAY_DRAIN_WINDOW_MS: '2000' },
    });
    services.push(relay.service);
    relayUrls.push(relay.url);
    say(`relay-${i} ${relay.url}   metrics ${relay.httpUrl}/metrics`);
  }

  const redis = new Redis(redisUrl);
  const publisher = createPublisher({ redis, maxLen: 10_000 });
  const ticks = demoStream.for('ticks');
  let seq = 0;
  const publishTimer = setInterval(() => {
    const n = seq++;
    void publisher.publish(ticks, { seq: n, text: `tick ${n}`, at: new Date().toISOString() }).then((r) => {
      if (!r.ok) say(`publish failed: ${r.error.code}: ${r.error.message}`);
    });
  }, 500);
  publishTimer.unref();

  const trpc = createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: `${auth.httpUrl}/trpc` })] });
  const client = new RelayClient({ urls: relayUrls, WebSocket });
  let seen = 0;
  client.subscribe({
    getToken: () => trpc.demo.token.query({ stream: 'ticks', user: 'fleet-tail' }),
    onEvent: (event, meta) => {
      say(`tail    ${meta.stream} ${meta.id} seq=${event.seq} ${event.text} (${event.at})`);
      if (exitAfter > 0 && ++seen >= exitAfter) {
        clearInterval(publishTimer);
        client.close();
        redis.disconnect();
        void shutdown(0);
      }
    },
    onStateChange: (state) => say(`tail    subscription ${state}`),
    onError: (error) => say(`tail    error ${error.code}: ${error.message}`),
  });
  say('fleet up: publishing demo:ticks every 500 ms; Ctrl-C stops everything');
} catch (error) {
  say(`fleet failed: ${error instanceof Error ? error.message : String(error)}`);
  await shutdown(1);
}
