import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { generateSigningKey, jwksDocument, SigningKeySet } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';
import { spawnRelay, startRedisCluster, waitFor } from '@streamgate/testkit';
import type { RedisCluster, RedisClusterNode, RelayProcess } from '@streamgate/testkit';
import { AUDIENCE, ISSUER } from './startFleet.js';

export interface ClusterRelays {
  readonly cluster: RedisCluster;
  /** In the order of `names`. */
  readonly relays: readonly RelayProcess[];
  /** The key the relays trust; sign tokens with mintToken. */
  readonly signingKey: PrivateJwk;
  stop(): Promise<void>;
}

/**
 * A real Redis Cluster (3 primaries, 1 replica each, `--notify-keyspace-events Kt` on every node)
 * and relay processes whose allowlist is that cluster, trusting a fresh key from a JWKS file (no
 * auth service: tokens are minted by the test).
 */
export async function startClusterRelays(
  names: readonly string[],
  env: Readonly<Record<string, string>>,
  clusterOptions: { readonly nodeTimeoutMs?: number } = {},
): Promise<ClusterRelays> {
  const cluster = await startRedisCluster({ args: ['--notify-keyspace-events', 'Kt'], ...clusterOptions });
  const dir = await mkdtemp(join(tmpdir(), 'cluster-relay-'));
  const relays: RelayProcess[] = [];
  const stop = async (): Promise<void> => {
    await Promise.allSettled(relays.map((r) => r.service.stop()));
    await cluster.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const signingKey = await generateSigningKey('ES256', 'cluster-key-1');
    const keys = await SigningKeySet.fromJson(JSON.stringify([signingKey]));
    if (!keys.ok) throw new Error(keys.error.message);
    await writeFile(join(dir, 'jwks.json'), JSON.stringify(jwksDocument(keys.keys)));
    const started = await Promise.all(
      names.map(async (name) => {
        const relay = await spawnRelay({
          name,
          authUrl: 'http://127.0.0.1:9',
          issuer: ISSUER,
          audience: AUDIENCE,
          redisAllowlist: cluster.url,
          env: { RELAY_JWKS_URL: '', RELAY_JWKS_FILE: join(dir, 'jwks.json'), RELAY_DRAIN_WINDOW_MS: '1000', ...env },
        });
        relays.push(relay);
        await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, {
          timeoutMs: 20_000,
          message: `${name} never became ready`,
        });
        return relay;
      }),
    );
    return { cluster, relays: started, signingKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** One question to one node on a connection of its own, closed after (a node may be killed later). */
export async function askNode<T>(node: RedisClusterNode, question: (client: Redis) => Promise<T>): Promise<T> {
  const client = node.client();
  try {
    return await question(client);
  } finally {
    client.disconnect();
  }
}

/** Waits until `count()` reaches `total`; a failure says how far it got. */
export async function waitCount(count: () => number, total: number, what: string, timeoutMs: number): Promise<void> {
  try {
    await waitFor(() => count() === total, { timeoutMs, message: what });
  } catch (error) {
    throw new Error(`${what}: ${count()}/${total}`, { cause: error });
  }
}
