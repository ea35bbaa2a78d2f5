import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { configError, envEnum, envInt, envList, envProblems, envText, presentText, whenValid } from '@streamgate/boot';
import type { ConfigProblem, ConfigResult, Env } from '@streamgate/boot';
import { OPS_STREAM_DEFAULT, podNameCheck } from '@streamgate/ops';
import { streamSlotTag } from '@streamgate/redis';
import { normalizeRedisTarget, streamNameSchema } from '@streamgate/protocol';
import { ingestJetStreamConfig, ingestJetStreamEnv, ingestJetStreamProblems } from './jetstream/ingestJetStreamConfig.js';
import type { IngestJetStreamConfig } from './jetstream/ingestJetStreamConfig.js';
import { ingestRedisConfig, ingestRedisUrlCheck, redisTargetItemCheck } from './redis/ingestRedisConfig.js';
import type { IngestRedisConfig } from './redis/ingestRedisConfig.js';
import { venueSchema, venueStreams } from './venue/venueConfig.js';
import { VenueKeyShares } from './venue/VenueKeyShares.js';

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'expected 0x-prefixed hex');

export const providerSchema = z
  .strictObject({
    id: z
      .string()
      .min(1)
      .regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
    wsUrl: z.url({ protocol: /^wss?$/, error: 'must be a ws:// or wss:// URL' }).optional(),
    httpUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }).optional(),
    /** Lower is preferred for the WebSocket subscription. */
    priority: z.number().int().min(0).default(0),
  })
  .refine((p) => p.wsUrl !== undefined || p.httpUrl !== undefined, 'a provider needs wsUrl, httpUrl or both');

export const chainSchema = z.strictObject({
  providers: z.array(providerSchema).min(1),
  /** Expected block interval; stall detection is measured in multiples of it. */
  blockTimeMs: z.number().int().min(50).max(600_000).default(12_000),
  maxBackfillBlocks: z.number().int().min(1).max(100_000).default(32),
  /** Blocks of hashes and written logs kept in Redis per stream: the deepest reorg that is retracted exactly. */
  historyDepth: z.number().int().min(2).max(10_000).default(128),
  getLogsRangeBlocks: z.number().int().min(1).max(10_000).default(100),
  maxFailovers: z.number().int().min(1).max(100).default(3),
  failoverWindowMs: z.number().int().min(100).default(5_000),
  degradedRecoverMs: z.number().int().min(100).default(30_000),
  /**
   * Failback hold-down: while a stream is subscribed on another provider, the preferred one (lowest
   * `priority` with a wsUrl) must answer every head poll, within `lagBlocks` of the oracle, for this
   * long before the stream moves back to it.
   */
  failbackHoldMs: z.number().int().min(100).max(86_400_000).default(60_000),
  headPollMs: z.number().int().min(20).max(600_000).optional(),
  /** Failover when the oracle is this many blocks ahead of the live subscription. */
  lagBlocks: z.number().int().min(1).max(1_000).default(3),
  /** Failover when the oracle moved and the live subscription pushed nothing for this long. */
  stallMs: z.number().int().min(50).optional(),
  requestTimeoutMs: z.number().int().min(50).max(120_000).default(5_000),
  maxEventBuffer: z.number().int().min(1).max(100_000).default(100),
});

export const streamSpecSchema = z.strictObject({
  stream: streamNameSchema,
  chain: z.string().min(1),
  kind: z.enum(['newHeads', 'logs']),
  filter: z
    .strictObject({ address: z.union([hex, z.array(hex)]).optional(), topics: z.array(z.union([hex, z.array(hex), z.null()])).optional() })
    .optional(),
  continuity: z.enum(['best_effort', 'strict']).default('best_effort'),
});

export const ingestTopologySchema = z
  .strictObject({
    chains: z.record(z.string().min(1), chainSchema).default({}),
    streams: z.array(streamSpecSchema).default([]),
    venues: z.record(z.string(), venueSchema).default({}),
  })
  .superRefine((t, ctx) => {
    if (t.streams.length === 0 && Object.keys(t.venues).length === 0) {
      ctx.addIssue({ code: 'custom', path: ['streams'], message: 'configure at least one stream or venue' });
    }
    const seen = new Set<string>();
    t.streams.forEach((s, i) => {
      if (seen.has(s.stream)) ctx.addIssue({ code: 'custom', path: ['streams', i, 'stream'], message: `duplicate stream ${s.stream}` });
      seen.add(s.stream);
      const tag = streamSlotTag(s.stream);
      if (!tag.ok) ctx.addIssue({ code: 'custom', path: ['streams', i, 'stream'], message: `ingest cannot serve ${tag.reason}` });
      if (t.chains[s.chain] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['streams', i, 'chain'],
          message: `unknown chain "${s.chain}" (configured: ${Object.keys(t.chains).join(', ')})`,
        });
      }
    });
    for (const [name, venue] of Object.entries(t.venues)) {
      if (!/^[a-z0-9_-]{1,32}$/.test(name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['venues', name],
          message: 'a venue name is 1–32 lowercase letters, digits, _ or - (it names its streams)',
        });
      }
      const { prefix, control } = venueStreams(name, venue);
      for (const key of [control, ...venue.symbols.map((s) => prefix + s)]) {
        if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['venues', name], message: `stream ${key} is configured twice` });
        seen.add(key);
        const tag = streamSlotTag(key);
        if (!tag.ok) ctx.addIssue({ code: 'custom', path: ['venues', name], message: `ingest cannot serve ${tag.reason}` });
      }
    }
    // Entries on one endpoint and key share one limiter and one session budget, which can have
    // only one set of numbers; taking the first entry's silently would ignore the other's.
    const firstOnKey = new Map<string, string>();
    for (const [name, venue] of Object.entries(t.venues)) {
      const id = VenueKeyShares.idOf(venue);
      const first = firstOnKey.get(id);
      const other = first === undefined ? undefined : t.venues[first];
      if (first === undefined || other === undefined) {
        firstOnKey.set(id, name);
        continue;
      }
      const differ = [
        ...(JSON.stringify(other.rateLimit) === JSON.stringify(venue.rateLimit) ? [] : ['rateLimit']),
        ...(other.maxSessions === venue.maxSessions ? [] : ['maxSessions']),
      ];
      if (differ.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['venues', name],
          message:
            `uses the same app key at ${VenueKeyShares.endpointOf(venue.httpUrl)} as venue ${first}, so both share one rate limiter ` +
            `and one session budget: set the same ${differ.join(' and ')} on both`,
        });
      }
    }
    for (const [name, chain] of Object.entries(t.chains)) {
      if (!chain.providers.some((p) => p.wsUrl !== undefined))
        ctx.addIssue({ code: 'custom', path: ['chains', name, 'providers'], message: 'no provider has a wsUrl' });
      if (!chain.providers.some((p) => p.httpUrl !== undefined))
        ctx.addIssue({
          code: 'custom',
          path: ['chains', name, 'providers'],
          message: 'no provider has an httpUrl (needed for gap-fill and the head oracle)',
        });
      const ids = chain.providers.map((p) => p.id);
      if (new Set(ids).size !== ids.length)
        ctx.addIssue({ code: 'custom', path: ['chains', name, 'providers'], message: 'provider ids must be unique' });
    }
  });

export type ChainConfig = z.output<typeof chainSchema>;
export type StreamSpec = z.output<typeof streamSpecSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
export type IngestTopology = z.output<typeof ingestTopologySchema>;

export const ingestConfigSchema = z
  .object({
    INGEST_HOST: envText({ fallback: '0.0.0.0' }),
    INGEST_PORT: envInt({ fallback: 8090, min: 0, max: 65535, meaning: '0 = any free port', fix: 'set it to a port number' }),
    INGEST_WORKER_ID: envText({ fallback: `${hostname()}-${process.pid}`, fallbackText: '<hostname>-<pid>', check: podNameCheck }),
    // Where the streams are written: one target (an instance or a Redis Cluster), or a list of
    // instances each stream is placed on by placeStream, like the issuer and the publisher.
    INGEST_REDIS_URL: envText({ optional: 'and set INGEST_REDIS_TARGETS instead', check: ingestRedisUrlCheck }),
    INGEST_REDIS_TARGETS: envList({
      fallback: [],
      fallbackText: 'none (set INGEST_REDIS_URL)',
      each: redisTargetItemCheck,
      nonEmpty: true,
    }),
    INGEST_REDIS_USERNAME: envText({ optional: 'for no username' }),
    INGEST_REDIS_PASSWORD: envText({ optional: 'for no password' }),
    // Streams in NATS JetStream instead (docs/protocol.md §17): INGEST_JETSTREAM_TARGET and credentials.
    ...ingestJetStreamEnv,
    // Lease, fence, state and dedupe keys are `<prefix>{S}<stream>:…`: the first brace must open
    // the stream's slot tag, so the prefix holds none.
    INGEST_KEY_PREFIX: envText({
      fallback: 'sg:ingest:',
      check: (text) => (/[{}]/.test(text) ? 'must not contain "{" or "}" (keys put the stream\'s hash tag after it); remove them' : null),
    }),
    INGEST_LEASE_TTL_MS: envInt({ fallback: 10_000, min: 500, max: 600_000 }),
    INGEST_TICK_MS: envInt({ fallback: 3_000, min: 50, max: 60_000 }),
    // A lease is used only once this many replicas acknowledged its grant (WAIT after the acquire
    // script): a failover then cannot hand the same fencing token out twice unless it promotes a
    // replica that had not acknowledged. Unset: no wait (docs/protocol.md §11).
    INGEST_LEASE_WAIT_REPLICAS: envInt({ optional: 'to use a lease without waiting for replicas', min: 1, max: 100 }),
    INGEST_LEASE_WAIT_TIMEOUT_MS: envInt({ fallback: 500, min: 1, max: 200_000 }),
    INGEST_DEMAND_GRACE_MS: envInt({ fallback: 30_000, min: 0, max: 86_400_000, meaning: '0 = stop as soon as demand ends' }),
    INGEST_DEDUPE_TTL_MS: envInt({ fallback: 3_600_000, min: 1_000, max: 7 * 86_400_000 }),
    INGEST_STREAM_MAXLEN: envInt({ fallback: 100_000, min: 0, max: 1_000_000_000, meaning: '0 = never trim' }),
    // The prefixes relays (RELAY_DEMAND_PREFIXES) and auth (AUTH_DEMAND_PREFIXES) register demand
    // under. A topology stream outside all of them is never wanted, so never served: warned at boot.
    INGEST_DEMAND_PREFIXES: envList({ fallback: [], fallbackText: 'none (no check)' }),
    // The operations stream: a snapshot of this worker's leases, chain streams and venues each
    // second (packages/ops). Unset: not published.
    INGEST_OPS_REDIS_URL: envText({ optional: 'to publish no operations snapshots', check: ingestRedisUrlCheck }),
    INGEST_OPS_STREAM: envText({
      fallback: OPS_STREAM_DEFAULT,
      check: (text) =>
        streamNameSchema.safeParse(text).success
          ? null
          : 'must be a stream name (1–200 letters, digits and _ . : { } - /); set it to one, e.g. streamgate:ops',
    }),
    INGEST_TOPOLOGY: envText({ optional: 'and set INGEST_TOPOLOGY_FILE instead' }),
    INGEST_TOPOLOGY_FILE: envText({ optional: 'and set INGEST_TOPOLOGY instead' }),
    LOG_LEVEL: envEnum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], { fallback: 'info' }),
  })
  .superRefine(
    (env, ctx) => {
      if ((env.INGEST_TOPOLOGY === undefined) === (env.INGEST_TOPOLOGY_FILE === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['INGEST_TOPOLOGY'],
          message: `${env.INGEST_TOPOLOGY === undefined ? 'and INGEST_TOPOLOGY_FILE are both unset' : 'and INGEST_TOPOLOGY_FILE are both set'}; set exactly one of INGEST_TOPOLOGY (JSON) or INGEST_TOPOLOGY_FILE (path to JSON)`,
        });
      }
    },
    whenValid('INGEST_TOPOLOGY', 'INGEST_TOPOLOGY_FILE'),
  )
  .superRefine(
    (env, ctx) => {
      const targets = env.INGEST_REDIS_TARGETS.length;
      if ((env.INGEST_REDIS_URL === undefined) === (targets === 0)) {
        ctx.addIssue({
          code: 'custom',
          path: ['INGEST_REDIS_URL'],
          message: `${env.INGEST_REDIS_URL === undefined ? 'and INGEST_REDIS_TARGETS are both unset' : 'and INGEST_REDIS_TARGETS are both set'}; set exactly one: INGEST_REDIS_URL to the Redis (or Redis Cluster) the relays read these streams from, e.g. redis://redis:6379/0, or INGEST_REDIS_TARGETS to the instances streams are placed on, the list auth and the publisher use`,
        });
      }
      const normalized = env.INGEST_REDIS_TARGETS.map((t) => normalizeRedisTarget(t) ?? t);
      const twice = normalized.filter((t, i) => normalized.indexOf(t) !== i);
      if (twice.length > 0) {
        ctx.addIssue({
          code: 'custom',
          path: ['INGEST_REDIS_TARGETS'],
          message: `lists ${[...new Set(twice)].join(', ')} more than once; list each instance once`,
        });
      }
    },
    whenValid('INGEST_REDIS_URL', 'INGEST_REDIS_TARGETS'),
  )
  .superRefine(
    (env, ctx) => {
      if (env.INGEST_TICK_MS * 3 > env.INGEST_LEASE_TTL_MS) {
        ctx.addIssue({
          code: 'custom',
          path: ['INGEST_TICK_MS'],
          message: `must be at most a third of INGEST_LEASE_TTL_MS (${env.INGEST_LEASE_TTL_MS}) so a live owner renews in time; lower it or raise INGEST_LEASE_TTL_MS`,
        });
      }
    },
    whenValid('INGEST_TICK_MS', 'INGEST_LEASE_TTL_MS'),
  )
  .superRefine(
    (env, ctx) => {
      // While replicas are short each acquire attempt waits the whole timeout; the store tries
      // once per third of a TTL, so a tick plus one such wait stays inside the TTL.
      if (env.INGEST_LEASE_WAIT_REPLICAS !== undefined && env.INGEST_LEASE_WAIT_TIMEOUT_MS * 3 > env.INGEST_LEASE_TTL_MS) {
        ctx.addIssue({
          code: 'custom',
          path: ['INGEST_LEASE_WAIT_TIMEOUT_MS'],
          message: `must be at most a third of INGEST_LEASE_TTL_MS (${env.INGEST_LEASE_TTL_MS}) when INGEST_LEASE_WAIT_REPLICAS is set, so a renewal is never late behind a WAIT; lower it or raise INGEST_LEASE_TTL_MS`,
        });
      }
    },
    whenValid('INGEST_LEASE_WAIT_REPLICAS', 'INGEST_LEASE_WAIT_TIMEOUT_MS', 'INGEST_LEASE_TTL_MS'),
  );

export type IngestConfig = z.output<typeof ingestConfigSchema> & {
  topology: IngestTopology;
  /** Leases and demand, and the streams unless `jetStream` is set. */
  redis: IngestRedisConfig;
  /** Set: every stream is written to this JetStream target. */
  jetStream: IngestJetStreamConfig | undefined;
};

const TOPOLOGY_EXAMPLE =
  '{"chains":{"<name>":{"providers":[{"id":"a","wsUrl":"ws://…","httpUrl":"http://…"}]}},"streams":[{"stream":"evm:<name>:heads","chain":"<name>","kind":"newHeads"}]}';

/** Topology problems, each named by its field path under the variable that held the JSON. */
function topologyProblems(issues: readonly z.core.$ZodIssue[], variable: string): ConfigProblem[] {
  return issues.map((issue) => {
    const name = issue.path.length === 0 ? variable : `${variable}.${issue.path.map(String).join('.')}`;
    return { variable: name, message: `${name}: ${issue.message}` };
  });
}

function readTopology(inline: string | undefined, file: string | undefined): { raw: string; variable: string } | ConfigProblem {
  if (inline !== undefined) return { raw: inline, variable: 'INGEST_TOPOLOGY' };
  const path = file ?? '';
  try {
    return { raw: readFileSync(path, 'utf8'), variable: 'INGEST_TOPOLOGY_FILE' };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      variable: 'INGEST_TOPOLOGY_FILE',
      message: `INGEST_TOPOLOGY_FILE=${JSON.stringify(path)}: cannot be read (${reason}); set it to a readable JSON file`,
    };
  }
}

function parseTopology(inline: string | undefined, file: string | undefined): { topology: IngestTopology } | { problems: ConfigProblem[] } {
  const source = readTopology(inline, file);
  if ('message' in source) return { problems: [source] };
  let json: unknown;
  try {
    json = JSON.parse(source.raw);
  } catch (error) {
    // JSON.parse quotes the text around the fault, which may be a provider URL's API key: only its place.
    const at = error instanceof Error ? /at position (\d+)/.exec(error.message)?.[1] : undefined;
    const where = at === undefined ? '' : ` at character ${at}`;
    return {
      problems: [
        {
          variable: source.variable,
          message: `${source.variable}: is not JSON${where} (its text is not shown); expected ${TOPOLOGY_EXAMPLE}`,
        },
      ],
    };
  }
  const topology = ingestTopologySchema.safeParse(json);
  return topology.success ? { topology: topology.data } : { problems: topologyProblems(topology.error.issues, source.variable) };
}

/**
 * Parses the environment and the topology, reporting every problem of both at once, each named
 * by its variable or topology field with the fix. Provider URLs may hold API keys, so the
 * topology's text never appears in a message.
 */
export function parseIngestConfig(env: Env): ConfigResult<IngestConfig> {
  const result = ingestConfigSchema.safeParse(env);
  const problems = result.success
    ? []
    : envProblems(result.error.issues, env, ['INGEST_TOPOLOGY', 'INGEST_REDIS_PASSWORD', 'INGEST_NATS_PASSWORD']);
  problems.push(...ingestJetStreamProblems(env));
  // The topology is read whenever exactly one source is set, so its problems come with the rest.
  const inline = presentText(env.INGEST_TOPOLOGY);
  const file = presentText(env.INGEST_TOPOLOGY_FILE);
  const topology = (inline === undefined) === (file === undefined) ? null : parseTopology(inline, file);
  if (topology !== null && 'problems' in topology) problems.push(...topology.problems);
  if (!result.success || topology === null || 'problems' in topology || problems.length > 0) {
    return { ok: false, error: configError('ingest', problems) };
  }
  const config = {
    ...result.data,
    topology: topology.topology,
    redis: ingestRedisConfig(result.data),
    jetStream: ingestJetStreamConfig(result.data),
  };
  return { ok: true, config };
}
