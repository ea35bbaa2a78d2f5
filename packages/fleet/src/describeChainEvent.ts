import { ingestEventSchema } from '@streamgate/ingest-events';

/** An entry of an ingest chain stream as one short terminal line; an unknown shape is said so, not thrown. */
export function describeChainEvent(data: unknown): { kind: string; text: string } {
  const parsed = ingestEventSchema.safeParse(data);
  if (!parsed.success) return { kind: 'unparsed', text: `unparsed entry: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  const event = parsed.data;
  switch (event.type) {
    case 'block':
      return { kind: 'block', text: `block ${event.number} ${event.hash.slice(0, 12)}…` };
    case 'log':
      return { kind: 'log', text: `log block ${event.blockNumber} #${event.logIndex}${event.removed ? ' removed' : ''}` };
    case 'reorg':
      return { kind: 'reorg', text: `reorg depth ${event.depth} back to ${event.commonAncestor.number}` };
    case 'gap':
      return { kind: 'gap', text: `gap ${event.fromBlock}–${event.toBlock} (${event.reason})` };
    case 'stream_error':
      return { kind: 'stream_error', text: `stream error ${event.code}: ${event.message}` };
  }
}
