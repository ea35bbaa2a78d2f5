import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { streamNameSchema } from '@streamgate/protocol';
import { venueSchema, venueStreams } from './venue/venueConfig.js';

const int = (fallback: number, min: number, max: number) => z.coerce.number().int().min(min).max(max).default(fallback);
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'expected 0x-prefixed hex');

export const providerSchema = z
  .object({
    id: z.string().min(1).regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
    wsUrl: z.url({ protocol: /^wss?$/ }).optional(),
    httpUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** Lower is preferred for the WebSocket subscription. */
    priority: z.number().int().min(0).default(0),
  })
  .refine((p) => p.wsUrl !== undefined || p.httpUrl !== undefined, 'a provider needs wsUrl, httpUrl or both');

export const chainSchema = z.object({
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
  headPollMs: z.number().int().min(20).max(600_000).optional(),
  /** Failover when the oracle is this many blocks ahead of the live subscription. */
  lagBlocks: z.number().int().min(1).max(1_000).default(3),
  /** Failover when the oracle moved and the live subscription pushed nothing for this long. */
  stallMs: z.number().int().min(50).optional(),
  requestTimeoutMs: z.number().int().min(50).max(120_000).default(5_000),
  maxEventBuffer: z.number().int().min(1).max(100_000).default(100),
});

export const streamSpecSchema = z.object({
  stream: streamNameSchema,
  chain: z.string().min(1),
  kind: z.enum(['newHeads', 'logs']),
  filter: z.object({ address: z.union([hex, z.array(hex)]).optional(), topics: z.array(z.union([hex, z.array(hex), z.null()])).optional() }).optional(),
  continuity: z.enum(['best_effort', 'strict']).default('best_effort'),
});

export const ingestTopologySchema = z
  .object({
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
      if (t.chains[s.chain] === undefined) {
        ctx.addIssue({ code: 'custom', path: ['streams', i, 'chain'], message: `unknown chain "${s.chain}" (configured: ${Object.keys(t.chains).join(', ')})` });
      }
    });
    for (const [name, venue] of Object.entries(t.venues)) {
      if (!/^[a-z0-9_-]{1,32}$/.test(name)) {
        ctx.addIssue({ code: 'custom', path: ['venues', name], message: 'a venue name is 1–32 lowercase letters, digits, _ or - (it names its streams)' });
      }
      const { prefix, control } = venueStreams(name, venue);
      for (const key of [control, ...venue.symbols.map((s) => prefix + s)]) {
        if (seen.has(key)) ctx.addIssue({ code: 'custom', path: ['venues', name], message: `stream ${key} is configured twice` });
        seen.add(key);
      }
    }
    for (const [name, chain] of Object.entries(t.chains)) {
      if (!chain.providers.some((p) => p.wsUrl !== undefined)) ctx.addIssue({ code: 'custom', path: ['chains', name, 'providers'], message: 'no provider has a wsUrl' });
      if (!chain.providers.some((p) => p.httpUrl !== undefined)) ctx.addIssue({ code: 'custom', path: ['chains', name, 'providers'], message: 'no provider has an httpUrl (needed for gap-fill and the head oracle)' });
      const ids = chain.providers.map((p) => p.id);
      if (new Set(ids).size !== ids.length) ctx.addIssue({ code: 'custom', path: ['chains', name, 'providers'], message: 'provider ids must be unique' });
    }
  });

export type ChainConfig = z.output<typeof chainSchema>;
export type StreamSpec = z.output<typeof streamSpecSchema>;
export type ProviderConfig = z.output<typeof providerSchema>;
export type IngestTopology = z.output<typeof ingestTopologySchema>;

const topologyText = z.string().transform((raw, ctx) => {
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    ctx.addIssue({ code: 'custom', message: 'is not JSON' });
    return z.NEVER;
  }
});

export const ingestConfigSchema = z
  .object({
    INGEST_HOST: z.string().default('0.0.0.0'),
    INGEST_PORT: int(8090, 0, 65535),
    INGEST_WORKER_ID: z.string().min(1).default(`${hostname()}-${process.pid}`),
    INGEST_REDIS_URL: z.url({ protocol: /^rediss?$/ }),
    INGEST_KEY_PREFIX: z.string().min(1).default('sg:ingest:'),
    INGEST_LEASE_TTL_MS: int(10_000, 500, 600_000),
    INGEST_TICK_MS: int(3_000, 50, 60_000),
    INGEST_DEMAND_GRACE_MS: int(30_000, 0, 86_400_000),
    INGEST_DEDUPE_TTL_MS: int(3_600_000, 1_000, 7 * 86_400_000),
    INGEST_STREAM_MAXLEN: int(100_000, 0, 1_000_000_000),
    INGEST_TOPOLOGY: z.string().optional(),
    INGEST_TOPOLOGY_FILE: z.string().min(1).optional(),
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  })
  .superRefine((env, ctx) => {
    if ((env.INGEST_TOPOLOGY === undefined) === (env.INGEST_TOPOLOGY_FILE === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['INGEST_TOPOLOGY'], message: 'set exactly one of INGEST_TOPOLOGY (JSON) or INGEST_TOPOLOGY_FILE (path to JSON)' });
    }
    if (env.INGEST_TICK_MS * 3 > env.INGEST_LEASE_TTL_MS) {
      ctx.addIssue({ code: 'custom', path: ['INGEST_TICK_MS'], message: 'must be at most a third of INGEST_LEASE_TTL_MS so a live owner renews in time' });
    }
  });

export type IngestConfig = z.output<typeof ingestConfigSchema> & { topology: IngestTopology };

const hints: Record<string, string> = {
  INGEST_REDIS_URL: 'redis://host:6379/0, the Redis the relays read these streams from',
  INGEST_TOPOLOGY: '{"chains":{"<name>":{"providers":[{"id":"a","wsUrl":"ws://…","httpUrl":"http://…","priority":0}]}},"streams":[{"stream":"<key>","chain":"<name>","kind":"newHeads"}]}',
};

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

function describe(issues: readonly z.core.$ZodIssue[], prefix: string): string[] {
  return issues.map((issue) => {
    const name = issue.path.length === 0 ? prefix : `${prefix}${prefix === '' ? '' : '.'}${issue.path.map(String).join('.')}`;
    const hint = hints[String(issue.path[0] ?? '')];
    return `  ${name}: ${issue.message}${hint === undefined ? '' : ` — expected ${hint}`}`;
  });
}

/** Parses the environment and the topology; the error names each bad variable or field and the fix. */
export function parseIngestConfig(env: Record<string, string | undefined>): IngestConfig {
  const result = ingestConfigSchema.safeParse(env);
  if (!result.success) throw new ConfigError(`invalid ingest configuration:\n${describe(result.error.issues, '').join('\n')}`);
  const source = result.data.INGEST_TOPOLOGY_FILE;
  let raw: string;
  try {
    raw = result.data.INGEST_TOPOLOGY ?? readFileSync(source ?? '', 'utf8');
  } catch (error) {
    throw new ConfigError(`invalid ingest configuration:\n  INGEST_TOPOLOGY_FILE: cannot read ${source}: ${String(error)}`);
  }
  const name = source === undefined ? 'INGEST_TOPOLOGY' : 'INGEST_TOPOLOGY_FILE';
  const parsed = topologyText.pipe(ingestTopologySchema).safeParse(raw);
  if (!parsed.success) throw new ConfigError(`invalid ingest configuration:\n${describe(parsed.error.issues, name).join('\n')}`);
  return { ...result.data, topology: parsed.data };
}
