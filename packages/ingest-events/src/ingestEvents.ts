import { z } from 'zod';

/**
 * Payloads that ingest workers write into a stream's `data` field. Every payload carries a `type`
 * so one stream can interleave blocks or logs with the typed events that explain a discontinuity
 * (reorg, gap, stream_error); a consumer switches on `type` and never has to infer a skip.
 */
const hex = z.string().regex(/^0x[0-9a-fA-F]*$/, 'expected 0x-prefixed hex');

export const ingestBlockEventSchema = z.object({
  type: z.literal('block'),
  chain: z.string(),
  number: z.number().int().nonnegative(),
  hash: hex,
  parentHash: hex,
  timestamp: z.number().int().nonnegative(),
  /** The block header as the node returned it. */
  header: z.record(z.string(), z.unknown()),
});

export const ingestLogEventSchema = z.object({
  type: z.literal('log'),
  chain: z.string(),
  blockNumber: z.number().int().nonnegative(),
  blockHash: hex,
  transactionHash: hex,
  transactionIndex: z.number().int().nonnegative(),
  logIndex: z.number().int().nonnegative(),
  address: hex,
  topics: z.array(hex),
  data: hex,
  /** true: this log was written before and its block left the canonical chain; retract it. */
  removed: z.boolean(),
});

export const ingestReorgEventSchema = z.object({
  type: z.literal('reorg'),
  chain: z.string(),
  /** The highest block both the old and the new chain share. */
  commonAncestor: z.object({ number: z.number().int().nonnegative(), hash: hex }),
  /** Blocks written before that are no longer canonical, highest first. */
  dropped: z.array(z.object({ number: z.number().int().nonnegative(), hash: hex })),
  /** How many blocks were replaced (dropped.length). */
  depth: z.number().int().nonnegative(),
});

export const ingestGapEventSchema = z.object({
  type: z.literal('gap'),
  chain: z.string(),
  /** Inclusive block range that will never appear in this stream. */
  fromBlock: z.number().int().nonnegative(),
  toBlock: z.number().int().nonnegative(),
  reason: z.enum(['backfill_limit', 'history_exhausted']),
});

export const ingestStreamErrorEventSchema = z.object({
  type: z.literal('stream_error'),
  chain: z.string(),
  code: z.enum(['gap_exceeds_backfill_limit', 'reorg_deeper_than_history']),
  message: z.string(),
  fromBlock: z.number().int().nonnegative(),
  toBlock: z.number().int().nonnegative(),
});

export const ingestEventSchema = z.discriminatedUnion('type', [
  ingestBlockEventSchema,
  ingestLogEventSchema,
  ingestReorgEventSchema,
  ingestGapEventSchema,
  ingestStreamErrorEventSchema,
]);

export type IngestBlockEvent = z.infer<typeof ingestBlockEventSchema>;
export type IngestLogEvent = z.infer<typeof ingestLogEventSchema>;
export type IngestReorgEvent = z.infer<typeof ingestReorgEventSchema>;
export type IngestGapEvent = z.infer<typeof ingestGapEventSchema>;
export type IngestStreamErrorEvent = z.infer<typeof ingestStreamErrorEventSchema>;
export type IngestEvent = z.infer<typeof ingestEventSchema>;
