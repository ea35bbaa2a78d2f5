import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { decodeProtectedHeader } from 'jose';
import { RelayClient } from '@streamgate/client';
import type { Subscription, SubscriptionError } from '@streamgate/client';
import type { DemoEvent, DemoRouter } from '@streamgate/auth';
import { generateSigningKey } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';
import { spawnAuth, spawnRelay, startRedis, waitFor } from '@streamgate/testkit';
import type { AppProcess, RedisServer, RelayProcess } from '@streamgate/testkit';
import { AUDIENCE, ISSUER, metricValue } from './support/startFleet.js';
import { mintToken } from './support/mintToken.js';
import { probeSubscribe } from './support/probeSubscribe.js';

// Short enough that every subscription refreshes its token during the rotation (the switch step
// alone waits this plus the skew), long enough for a loaded machine: a refresh, due the lead
// (5 s) before exp, still has the skew after exp to land.
const TOKEN_TTL_SECONDS = 20;
const SKEW_SECONDS = 5;
const JWKS_REFRESH_SECONDS = 10;
const FILE_POLL_MS = 200;
/** The documented allowance for a busy relay's late timers, in each key-removal bound (docs/protocol.md §10). */
const TIMER_MARGIN_MS = 1_000;
/** Timer lateness and process scheduling on a loaded machine, for the test's own waits (never a documented delay). */
const SLACK_MS = 3_000;
const CLIENTS = 20;
const STREAMS_PER_CLIENT = 50;

const publicJwk = ({ d: _d, ...rest }: PrivateJwk) => ({ ...rest, use: 'sig' });

let dir: string;
let redis: RedisServer;
let auth: AppProcess;
let byUrl: RelayProcess;
let byFile: RelayProcess;
const authKeysPath = (): string => join(dir, 'auth-keys.json');
const relayJwksPath = (): string => join(dir, 'relay-jwks.json');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'key-rotation-'));
  redis = await startRedis();
});
afterAll(async () => {
  await Promise.allSettled([byUrl?.service.stop(), byFile?.service.stop()]);
  await auth?.service.stop();
  await redis?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function metricsOf(relay: RelayProcess): Promise<string> {
  return (await fetch(`${relay.httpUrl}/metrics`)).text();
}

async function kidsOf(relay: RelayProcess): Promise<string[]> {
  const text = await metricsOf(relay);
  return [...text.matchAll(/^streamgate_relay_signing_key\{kid="([^"]+)"\} 1$/gm)].map((m) => m[1] ?? '');
}

async function jwksKids(): Promise<string[]> {
  const doc = (await (await fetch(`${auth.httpUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> };
  return doc.keys.map((k) => k.kid);
}

describe('live signing key rotation in a running fleet', () => {
  it('add, switch, remove with 1,000 subscriptions: no valid token refused; the removed key refused after the documented delay', async () => {
    const k1 = await generateSigningKey('ES256', 'k1');
    const k2 = await generateSigningKey('ES256', 'k2');
    writeFileSync(authKeysPath(), JSON.stringify([k1]));
    writeFileSync(relayJwksPath(), JSON.stringify({ keys: [publicJwk(k1)] }));
    auth = await spawnAuth({
      issuer: ISSUER,
      audience: AUDIENCE,
      redisUrl: redis.url,
      signingKeys: '',
      env: {
        NODE_ENV: 'test',
        AUTH_DEMO_ROUTER: 'true',
        AUTH_SIGNING_KEYS_FILE: authKeysPath(),
        AUTH_SIGNING_KEYS_POLL_MS: String(FILE_POLL_MS),
        AUTH_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS),
      },
    });
    const relayEnv = { RELAY_CLOCK_SKEW_SECONDS: String(SKEW_SECONDS), RELAY_REFRESH_LEAD_SECONDS: '5', RELAY_DRAIN_WINDOW_MS: '0' };
    const common = { authUrl: auth.httpUrl, issuer: ISSUER, audience: AUDIENCE, redisAllowlist: redis.url };
    byUrl = await spawnRelay({
      ...common,
      name: 'relay-url',
      env: { ...relayEnv, RELAY_JWKS_REFRESH_SECONDS: String(JWKS_REFRESH_SECONDS) },
    });
    byFile = await spawnRelay({
      ...common,
      name: 'relay-file',
      env: { ...relayEnv, RELAY_JWKS_URL: '', RELAY_JWKS_FILE: relayJwksPath(), RELAY_JWKS_FILE_POLL_MS: String(FILE_POLL_MS) },
    });
    for (const relay of [byUrl, byFile]) {
      await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, { timeoutMs: 20_000, message: 'relay not ready' });
    }
    const trpc = createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: `${auth.httpUrl}/trpc`, maxURLLength: 4_000 })] });

    const clients: RelayClient[] = [];
    const subs: Array<Subscription<DemoEvent>> = [];
    const errors: SubscriptionError[] = [];
    const subscribeBatch = (tag: string, relays: RelayProcess[]): void => {
      for (let c = 0; c < CLIENTS; c++) {
        const relay = relays[c % relays.length];
        if (relay === undefined) throw new Error('no relay');
        const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
        clients.push(client);
        for (let s = 0; s < STREAMS_PER_CLIENT; s++) {
          const stream = `rot-${tag}-${c}-${s}`;
          subs.push(
            client.subscribe({
              getToken: () => trpc.demo.token.query({ stream, user: 'alice' }),
              onEvent: () => undefined,
              onError: (error) => errors.push(error),
            }),
          );
        }
      }
    };
    const allLive = (message: string): Promise<unknown> =>
      waitFor(() => subs.every((s) => s.state === 'live'), { timeoutMs: 60_000, message }).catch((error: unknown) => {
        const states = new Map<string, number>();
        for (const s of subs) states.set(s.state, (states.get(s.state) ?? 0) + 1);
        const statuses = clients.map((c) => c.status).join(',');
        throw new Error(
          `${String(error)}; states ${JSON.stringify([...states])}; sockets ${statuses}; errors ${JSON.stringify(errors.slice(0, 3))}`,
        );
      });
    try {
      subscribeBatch('a', [byUrl, byFile]);
      expect(subs).toHaveLength(1_000);
      await allLive('the 1,000 subscriptions never went live');

      // Step 1: publish k2 beside k1 (k1 still signs).
      writeFileSync(authKeysPath(), JSON.stringify([k1, k2]));
      writeFileSync(relayJwksPath(), JSON.stringify({ keys: [publicJwk(k1), publicJwk(k2)] }));
      const publishedAt = Date.now();
      await waitFor(async () => (await jwksKids()).join() === 'k1,k2', {
        timeoutMs: FILE_POLL_MS + SLACK_MS,
        message: 'auth never published k2',
      });
      for (const [relay, delayMs] of [
        [byFile, FILE_POLL_MS],
        [byUrl, JWKS_REFRESH_SECONDS * 1000],
      ] as const) {
        await waitFor(async () => (await kidsOf(relay)).includes('k2'), {
          timeoutMs: delayMs + SLACK_MS,
          message: `${relay.url} never learned k2`,
        });
      }
      console.log(`rotation: k2 known to both relays ${Date.now() - publishedAt} ms after it was published`);

      // Step 2: sign with k2 (k1 still published). Every relay knows it already: nothing is refused.
      writeFileSync(authKeysPath(), JSON.stringify([k2, k1]));
      const switchedAt = Date.now();
      const kidOfFreshToken = async (): Promise<string> => {
        const minted = await trpc.demo.token.query({ stream: 'rot-probe', user: 'alice' });
        return decodeProtectedHeader(minted.token).kid ?? '';
      };
      await waitFor(async () => (await kidOfFreshToken()) === 'k2', {
        timeoutMs: FILE_POLL_MS + SLACK_MS,
        message: 'auth never switched to k2',
      });
      // The procedure: wait the longest token lifetime plus skew, so no k1 token is still valid.
      await waitFor(() => Date.now() >= switchedAt + (TOKEN_TTL_SECONDS + SKEW_SECONDS) * 1000 + 500, {
        timeoutMs: (TOKEN_TTL_SECONDS + SKEW_SECONDS) * 1000 + SLACK_MS,
        intervalMs: 100,
        message: 'clock',
      });

      // Step 3: retire k1.
      writeFileSync(authKeysPath(), JSON.stringify([k2]));
      writeFileSync(relayJwksPath(), JSON.stringify({ keys: [publicJwk(k2)] }));
      const retiredAt = Date.now();
      await waitFor(async () => (await jwksKids()).join() === 'k2', {
        timeoutMs: FILE_POLL_MS + SLACK_MS,
        message: 'auth never retired k1',
      });
      // Seen here no earlier than auth published it: the URL relay's delay counts from then.
      const authRetiredAt = Date.now();
      const refusedBeforeProbes = await Promise.all(
        [byUrl, byFile].map(async (r) => metricValue(await metricsOf(r), 'streamgate_relay_auth_failures_total')),
      );
      expect(refusedBeforeProbes).toEqual([0, 0]);

      // After the documented delay a token signed with k1 (still within its exp) is refused everywhere.
      // Judged on when each probe set out, not when its answer came back: a probe started after the
      // bound reaches the relay after it too, and on a loaded machine the probe's own round trip
      // (a new socket, a subscribe) is not the relay's delay.
      const oldKeyToken = await mintToken(k1, { stream: 'demo:rot-old', redis: redis.url });
      for (const [relay, from, boundMs] of [
        [byFile, retiredAt, FILE_POLL_MS + TIMER_MARGIN_MS],
        [byUrl, authRetiredAt, JWKS_REFRESH_SECONDS * 1000 + TIMER_MARGIN_MS],
      ] as const) {
        const probes: Array<{ startedMs: number; answer: string }> = [];
        await waitFor(
          async () => {
            const startedMs = Date.now() - from;
            const frame = await probeSubscribe(relay.url, oldKeyToken);
            // The refusal must be final: not retryable.
            probes.push({ startedMs, answer: frame.op === 'error' ? `${frame.code}${frame.retryable ? ' (retryable)' : ''}` : frame.op });
            return startedMs >= boundMs && frame.op === 'error';
          },
          { timeoutMs: boundMs + SLACK_MS, intervalMs: 100, message: `${relay.url} accepts k1 after the documented delay` },
        );
        const firstRefused = probes.find((p) => p.answer !== 'subscribed');
        const lastAccepted = probes.filter((p) => p.answer === 'subscribed').at(-1);
        console.log(
          `rotation: ${relay.url} last accepted a k1 probe sent ${lastAccepted?.startedMs ?? 'never'} ms, first refused one sent ` +
            `${firstRefused?.startedMs ?? 'never'} ms after it was retired (documented ≤ ${boundMs} ms; ${probes.length} probes)`,
        );
        expect(probes.filter((p) => p.startedMs >= boundMs)).toEqual(
          probes.filter((p) => p.startedMs >= boundMs).map((p) => ({ ...p, answer: 'token_kid_unknown' })),
        );
        expect(probes.filter((p) => p.answer !== 'subscribed').every((p) => p.answer === 'token_kid_unknown')).toBe(true);
      }
      // And by the relay's own clock (pino's `time`, epoch ms like Date.now()): it swapped in the
      // file's new key set within the bound.
      const reloaded = byFile.service.lines
        .filter((l) => l.includes('"msg":"RELAY_JWKS_FILE reloaded"') && l.includes('"kids":["k2"]'))
        .map((l) => (JSON.parse(l) as { time: number }).time - retiredAt);
      console.log(`rotation: relay-file reloaded k2 alone ${reloaded.join(', ')} ms after the write`);
      expect(reloaded).toHaveLength(1);
      expect(reloaded[0]).toBeLessThanOrEqual(FILE_POLL_MS + TIMER_MARGIN_MS);

      // Tokens from auth after the rotation work on both relays, and nothing held was disturbed.
      subscribeBatch('b', [byFile, byUrl]);
      await waitFor(() => subs.every((s) => s.state === 'live'), {
        timeoutMs: 60_000,
        message: 'new subscriptions after the rotation never went live',
      });
      const refreshes = await Promise.all(
        [byUrl, byFile].map(async (r) => metricValue(await metricsOf(r), 'streamgate_relay_token_refreshes_total', 'outcome="ok"')),
      );
      const refused = await Promise.all(
        [byUrl, byFile].map(async (r) =>
          metricValue(await metricsOf(r), 'streamgate_relay_auth_failures_total', 'reason="token_kid_unknown"'),
        ),
      );
      const refusedOther = await Promise.all(
        [byUrl, byFile].map(async (r) => metricValue(await metricsOf(r), 'streamgate_relay_auth_failures_total')),
      );
      console.log(
        `rotation: ${subs.length} subscriptions, ${refreshes.reduce((a, b) => a + b, 0)} token refreshes accepted during the rotation, ` +
          `${errors.length} client errors, relay refusals ${refusedOther.join('+')} (all of them the k1 probes)`,
      );
      expect(errors).toEqual([]);
      // Every subscription refreshed at least once across the three steps, on both relays.
      for (const count of refreshes) expect(count).toBeGreaterThanOrEqual(500);
      // Only the probes with the retired key were refused.
      expect(refusedOther).toEqual(refused);
    } finally {
      for (const client of clients) client.close();
    }
  }, 300_000);
});
