import { z } from 'zod';
import { streamNameSchema } from '@streamgate/protocol';
import { venueKindSchema, venueSymbolSchema } from './venueSchemas.js';

/**
 * One venue in the ingest topology. The defaults are the limits the venue itself states (100
 * symbols per session, 5 sessions per app key, its HTTP rate); where it enforces less than it
 * states, the feed measures the real ceiling at run time instead of trusting the number.
 */
export const venueSchema = z
  .strictObject({
    mqttUrl: z.url({ protocol: /^mqtts?$/, error: 'must be an mqtt:// or mqtts:// URL' }),
    httpUrl: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
    /** The app key both transports authenticate with; keep the topology in a Secret. */
    appKey: z.string().min(1),
    /** The symbols this worker may serve; each is the stream `<streamPrefix><SYMBOL>`, run while demanded. */
    symbols: z.array(venueSymbolSchema).min(1),
    streamPrefix: z.optional(streamNameSchema),
    controlStream: z.optional(streamNameSchema),
    kinds: z.array(venueKindSchema).min(1).default(['snapshot', 'quote', 'tick']),
    /** Kinds counted in coverage; only declare what the venue was seen to publish. */
    declaredKinds: z.array(venueKindSchema).min(1).optional(),
    maxSymbolsPerSession: z.number().int().min(1).max(10_000).default(100),
    maxSessions: z.number().int().min(1).max(100).default(5),
    reassertIntervalMs: z.number().int().min(100).max(3_600_000).default(60_000),
    reconcileTimeoutMs: z.number().int().min(100).max(600_000).default(60_000),
    callTimeoutMs: z.number().int().min(100).max(600_000).default(15_000),
    rejectedSymbolTtlMs: z
      .number()
      .int()
      .min(1_000)
      .max(30 * 86_400_000)
      .default(86_400_000),
    coverageStaleMs: z.number().int().min(100).max(3_600_000).default(30_000),
    connectTimeoutMs: z.number().int().min(100).max(120_000).default(10_000),
    rateLimit: z
      .strictObject({ perSecond: z.number().positive().max(10_000), burst: z.number().int().min(1).max(10_000) })
      .default({ perSecond: 10, burst: 10 }),
    maxBufferPerSymbol: z.number().int().min(1).max(1_000_000).default(10_000),
  })
  .superRefine((v, ctx) => {
    if (new Set(v.symbols).size !== v.symbols.length)
      ctx.addIssue({ code: 'custom', path: ['symbols'], message: 'symbols must be unique' });
    for (const kind of v.declaredKinds ?? []) {
      if (!v.kinds.includes(kind))
        ctx.addIssue({ code: 'custom', path: ['declaredKinds'], message: `declares "${kind}", which is not asked for in kinds` });
    }
  });

export type VenueConfig = z.output<typeof venueSchema>;

export function venueStreams(name: string, venue: VenueConfig): { prefix: string; control: string } {
  return { prefix: venue.streamPrefix ?? `md.${name}.`, control: venue.controlStream ?? `md.${name}._control` };
}
