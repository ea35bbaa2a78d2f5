import { createHash, randomBytes } from 'node:crypto';
import { OPS_STREAM_DEFAULT } from '@streamgate/ops';
import { streamNameSchema } from '@streamgate/protocol';
import type { RelaySubscription } from '@streamgate/protocol';
import { SigningKeySet, createTokenIssuer, generateSigningKey } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';
import { spawnAuth, spawnIngest, startVenueSim } from '@streamgate/testkit';
import type { AppProcess, FaultMode, RedisCluster, VenueSim } from '@streamgate/testkit';
import { FleetRelayPool } from './FleetRelayPool.js';
import type { FleetAction, FleetRelay } from './FleetRelayPool.js';
import { startFleetRedis } from './startFleetRedis.js';
import { startRelayFrontDoor } from './relayFrontDoor.js';
import type { RelayFrontDoor } from './relayFrontDoor.js';
import { FLEET_HEADS_STREAM, FLEET_LOGS_STREAM, startFleetChain } from './startFleetChain.js';
import type { FleetChain } from './startFleetChain.js';
import { startFleetViewers } from './startFleetViewers.js';
import type { FleetViewers } from './startFleetViewers.js';
import { describeIngestChange, watchIngest } from './watchIngest.js';
import type { IngestWatch } from './watchIngest.js';

export const FULL_FLEET_ISSUER = 'streamgate-fleet';
export const FULL_FLEET_AUDIENCE = 'streamgate-relay';
export const FULL_FLEET_PROVIDERS = ['primary', 'secondary'] as const;
export const FULL_FLEET_VENUE = 'sim';
const VENUE_APP_KEY = 'sim-app-key';
/** The symbols the venue lists; the viewers want the first half, so coverage is partial by design. */
const VENUE_SYMBOLS = Array.from({ length: 12 }, (_, i) => `S${String(i).padStart(3, '0')}`);
const DEMANDED_SYMBOLS = VENUE_SYMBOLS.slice(0, 6);
const DEMAND_PREFIXES = 'evm:,md.sim.';

export interface FullFleetOptions {
  /** Use this Redis instead of starting a redis-server. */
  redisUrl?: string;
  /**
   * Put the streams on a Redis Cluster the fleet starts (3 primaries with a replica each, `Kt` on
   * every node): tokens name its seed, relays allowlist it, publisher and ingest write there; the
   * operations stream stays on a redis-server of its own.
   */
  redisCluster?: boolean;
  authPort?: number;
  /** Browser origins the auth service answers (the dashboard's). */
  corsOrigins?: readonly string[];
  /** Simulated clients, each its own connection through the front door; default 20. */
  viewers?: number;
  /** One block (with one log) this often; default 1 000 ms. */
  blockMs?: number;
  /** The relays' RELAY_DRAIN_WINDOW_MS; default 20 000 ms, long enough to watch a drain. */
  drainWindowMs?: number;
  /** What the fleet has to say (ingest changes, relay exits, viewer errors), one line each. */
  log?: (line: string) => void;
}

export interface FullFleet extends AsyncDisposable {
  /** Where the streams are: an instance, or a cluster's `redis-cluster://` seed. */
  readonly redisUrl: string;
  /** Where the operations stream is (the streams' instance, or one of its own beside a cluster). */
  readonly opsRedisUrl: string;
  /** The streams' Redis Cluster, with FLEET_REDIS_CLUSTER; else null. */
  readonly redisCluster: RedisCluster | null;
  readonly authUrl: string;
  /** The operator credential; auth knows only its sha256 (AUTH_OPERATOR_CREDENTIAL_SHA256). */
  readonly credential: string;
  readonly opsStream: string;
  /** The front door's ws URL: spreads connections over the serving relays. */
  readonly relayUrl: string;
  /** Every relay started, drained and exited ones included, in start order. */
  readonly relays: readonly FleetRelay[];
  readonly providers: readonly string[];
  /** What each provider's proxy was last told: `pass`, `down`, `down (ws)`… */
  readonly providerModes: ReadonlyMap<string, string>;
  readonly streams: { readonly heads: string; readonly logs: string; readonly venue: readonly string[] };
  readonly signingKey: PrivateJwk;
  readonly chain: FleetChain;
  readonly venue: VenueSim;
  readonly ingest: AppProcess;
  readonly ingestWatch: IngestWatch;
  readonly viewers: FleetViewers;
  /** A token for any stream, as the product's backend would mint after its own authorization. */
  issue(stream: string, subject: string): Promise<RelaySubscription<unknown>>;
  /** `down` on the provider's proxy: its sockets are cut, new ones refused, HTTP answers 503. */
  cutProvider(name: string, only?: 'ws' | 'http'): FleetAction;
  restoreProvider(name: string, only?: 'ws' | 'http'): FleetAction;
  /** By name (`relay-0`) or index. */
  relay(id: string): FleetRelay | undefined;
  drainRelay(id: string, options?: { replace?: boolean }): Promise<FleetAction>;
  startRelay(): Promise<FleetRelay>;
  /** SIGKILLs the cluster primary serving `stream` (refused without a cluster). */
  killPrimary(stream: string): Promise<FleetAction>;
  /** Restarts the cluster nodes killed so far. */
  restartNodes(): Promise<FleetAction>;
  stop(): Promise<void>;
}

/**
 * The whole system on loopback: Redis, auth (demo router and operator credential), relay pods
 * behind a front door, anvil behind one fault proxy per provider, an ingest worker following
 * the chain and the simulated venue, and viewers whose subscriptions make the relays register
 * demand, so the worker owns the chain streams and some venue symbols. Every app publishes its
 * ops snapshot to the fleet's Redis. Used by `npm run fleet` and the browser tests.
 */
export async function startFullFleet(options: FullFleetOptions = {}): Promise<FullFleet> {
  const log = options.log ?? (() => undefined);
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch((error: unknown) => log(`stopping: ${String(error)}`));
  };
  try {
    const redis = await startFleetRedis({
      ...(options.redisUrl === undefined ? {} : { redisUrl: options.redisUrl }),
      ...(options.redisCluster === undefined ? {} : { cluster: options.redisCluster }),
    });
    cleanups.push(() => redis.stop());
    const redisUrl = redis.streamsUrl;
    const opsRedisUrl = redis.opsUrl;
    const opsStream = OPS_STREAM_DEFAULT;
    const credential = randomBytes(24).toString('base64url');
    // A key made at boot: development only. Production gives auth its key from a Secret.
    const signingKey = await generateSigningKey('ES256', `fleet-${Date.now()}`);
    const keys = await SigningKeySet.fromJwks([signingKey]);
    if (!keys.ok) throw new Error(keys.error.message);
    const issuer = createTokenIssuer({ keys: keys.keys, issuer: FULL_FLEET_ISSUER, audience: FULL_FLEET_AUDIENCE, redis: redisUrl });

    const chain = await startFleetChain({
      providers: FULL_FLEET_PROVIDERS,
      blockMs: options.blockMs ?? 1_000,
      onError: (error) => log(`chain   transaction failed: ${String(error)}`),
    });
    cleanups.push(() => chain.stop());
    const venue = await startVenueSim({ appKeys: [VENUE_APP_KEY], publishIntervalMs: 1_000 });
    cleanups.push(() => venue.close());

    const auth = await spawnAuth({
      issuer: FULL_FLEET_ISSUER,
      audience: FULL_FLEET_AUDIENCE,
      redisUrl,
      signingKeys: JSON.stringify([signingKey]),
      ...(options.authPort === undefined ? {} : { port: options.authPort }),
      env: {
        AUTH_DEMO_ROUTER: 'true', // the CLI tail asks the demo router for its token
        AUTH_OPERATOR_CREDENTIAL_SHA256: createHash('sha256').update(credential).digest('hex'),
        AUTH_OPS_REDIS_URL: opsRedisUrl,
        AUTH_OPS_STREAM: opsStream,
        AUTH_POD_NAME: 'auth',
        ...(options.corsOrigins === undefined ? {} : { AUTH_CORS_ORIGINS: options.corsOrigins.join(',') }),
      },
    });
    cleanups.push(() => auth.service.stop());

    const frontDoor: RelayFrontDoor = await startRelayFrontDoor();
    cleanups.push(() => frontDoor.close());
    const pool = new FleetRelayPool({
      frontDoor,
      spawn: { authUrl: auth.httpUrl, issuer: FULL_FLEET_ISSUER, audience: FULL_FLEET_AUDIENCE, redisAllowlist: redis.allowlist },
      env: () => ({
        RELAY_DRAIN_WINDOW_MS: String(options.drainWindowMs ?? 20_000),
        RELAY_DEMAND_PREFIXES: DEMAND_PREFIXES,
        // Demand follows subscribers within a second or two, so ingest starts while you watch.
        RELAY_DEMAND_INTERVAL_MS: '1000',
        RELAY_DEMAND_TTL_MS: '5000',
        RELAY_OPS_REDIS_URL: opsRedisUrl,
        RELAY_OPS_STREAM: opsStream,
        // The pod name in snapshots is RELAY_NODE_ID, which spawnRelay sets to `name`.
      }),
      log,
    });
    cleanups.push(() => pool.stop(3_000));

    const ingestStart = spawnIngest({
      name: 'ingest-0',
      redisUrl,
      topology: {
        ...chain.topology,
        venues: {
          [FULL_FLEET_VENUE]: {
            mqttUrl: venue.mqttUrl,
            httpUrl: venue.httpUrl,
            appKey: VENUE_APP_KEY,
            symbols: VENUE_SYMBOLS,
            // Four per session, so the six wanted symbols need two sessions: sharding to look at.
            maxSymbolsPerSession: 4,
            reassertIntervalMs: 2_000,
            reconcileTimeoutMs: 5_000,
            callTimeoutMs: 5_000,
            coverageStaleMs: 3_000,
            connectTimeoutMs: 3_000,
            rateLimit: { perSecond: 20, burst: 10 },
          },
        },
      },
      env: {
        INGEST_LEASE_TTL_MS: '3000',
        INGEST_TICK_MS: '500',
        INGEST_DEMAND_GRACE_MS: '5000',
        INGEST_DEMAND_PREFIXES: DEMAND_PREFIXES,
        INGEST_OPS_REDIS_URL: opsRedisUrl,
        INGEST_OPS_STREAM: opsStream,
        // Its pod name is INGEST_WORKER_ID, which spawnIngest sets to `name`.
      },
    });
    // The worker and the relays boot at the same time: each is a Node process compiling TypeScript.
    const [ingestStarted, ...relaysStarted] = await Promise.allSettled([ingestStart, pool.start(), pool.start()]);
    if (ingestStarted.status === 'fulfilled') cleanups.push(() => ingestStarted.value.service.stop());
    const failed = [ingestStarted, ...relaysStarted].find((r) => r.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    if (ingestStarted.status === 'rejected') throw ingestStarted.reason;
    const ingest = ingestStarted.value;
    const ingestWatch = watchIngest({
      httpUrl: ingest.httpUrl,
      venues: [FULL_FLEET_VENUE],
      onChange: (change) => log(`ingest  ${describeIngestChange(change)}`),
    });
    cleanups.push(() => Promise.resolve(ingestWatch.stop()));

    const issue = (stream: string, subject: string) =>
      issuer.issue({ name: streamNameSchema.parse(stream), schema: undefined }, { subject });
    const venueStreams = DEMANDED_SYMBOLS.map((s) => `md.${FULL_FLEET_VENUE}.${s}`);
    const viewers = startFleetViewers({
      url: frontDoor.url,
      count: Math.max(1, options.viewers ?? 20),
      // The first viewer wants every stream the fleet serves; the others one symbol each.
      streams: (i) =>
        i === 0
          ? [FLEET_HEADS_STREAM, FLEET_LOGS_STREAM, ...venueStreams]
          : [FLEET_HEADS_STREAM, venueStreams[i % venueStreams.length] ?? FLEET_HEADS_STREAM],
      issue,
      onError: (viewer, stream, error) => log(`viewer-${viewer} ${stream} error ${error.code}: ${error.message}`),
      onLog: (viewer, message) => log(`viewer-${viewer} ${message}`),
    });
    cleanups.push(() => Promise.resolve(viewers.close()));

    const providerModes = new Map<string, string>(FULL_FLEET_PROVIDERS.map((p) => [p, 'pass']));
    const setMode = (name: string, mode: FaultMode, only?: 'ws' | 'http'): FleetAction => {
      const what = only === undefined ? '' : ` (${only} only)`;
      if (chain.setMode(name, mode, only)) providerModes.set(name, `${mode}${what}`);
      if (providerModes.has(name)) return { ok: true, message: `provider ${name} ${mode === 'down' ? 'cut' : 'restored'}${what}` };
      return {
        ok: false,
        code: 'unknown_provider',
        retryable: false,
        message: `no provider "${name}" (providers: ${FULL_FLEET_PROVIDERS.join(', ')})`,
      };
    };
    return {
      redisUrl,
      opsRedisUrl,
      redisCluster: redis.cluster,
      authUrl: auth.httpUrl,
      credential,
      opsStream,
      relayUrl: frontDoor.url,
      get relays() {
        return pool.relays;
      },
      providers: FULL_FLEET_PROVIDERS,
      providerModes,
      streams: { heads: FLEET_HEADS_STREAM, logs: FLEET_LOGS_STREAM, venue: venueStreams },
      signingKey,
      chain,
      venue,
      ingest,
      ingestWatch,
      viewers,
      issue,
      cutProvider: (name, only) => setMode(name, 'down', only),
      restoreProvider: (name, only) => setMode(name, 'pass', only),
      relay: (id) => pool.find(id),
      drainRelay: (id, drain) => pool.drain(id, drain),
      startRelay: () => pool.start(),
      killPrimary: (stream) => redis.killPrimary(stream),
      restartNodes: () => redis.restartNodes(),
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
