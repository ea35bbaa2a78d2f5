import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { ingestEventSchema } from '@streamgate/ingest-events';
import type { IngestEvent } from '@streamgate/ingest-events';
import { jetStreamSubject } from '@streamgate/protocol';
import type { AnvilNode } from '@streamgate/testkit';
import { canonicalHashes } from './ingestHarness.js';

/** Every entry of `stream` on the JetStream stream `jetStream` (§17), oldest first, by sequence. */
export async function readJetStreamEvents(
  jsm: JetStreamManager,
  jetStream: string,
  stream: string,
): Promise<{ seq: number; event: IngestEvent }[]> {
  const subject = jetStreamSubject(jetStream, stream);
  const out: { seq: number; event: IngestEvent }[] = [];
  for (let from = 0; ;) {
    // MSG.GET's next_by_subj (server 2.9+) rides the client's `seq` query type.
    const query: { seq: number; next_by_subj: string } = { seq: from, next_by_subj: subject };
    const message: StoredMsg | null = await jsm.streams.getMessage(jetStream, query);
    if (message === null) return out;
    out.push({ seq: message.seq, event: ingestEventSchema.parse(JSON.parse(message.string())) });
    from = message.seq + 1;
  }
}

/** How far a newHeads stream is from "every block from its first to `head`, once each, in order". */
export interface BlockAudit {
  readonly first: number;
  readonly blocks: number;
  readonly duplicates: number;
  readonly gaps: number;
  /** Blocks out of order, with a hash the node does not have, or events that are not blocks. */
  readonly wrong: readonly string[];
}

/** Checks a newHeads stream's events block by block against the node, counting what is off. */
export async function auditBlocks(events: readonly { event: IngestEvent }[], anvil: AnvilNode, head: number): Promise<BlockAudit> {
  const wrong: string[] = [];
  const blocks = events.flatMap(({ event }) => {
    if (event.type === 'block') return [event];
    wrong.push(`a ${event.type} event`);
    return [];
  });
  const first = blocks[0]?.number;
  if (first === undefined) throw new Error('the stream holds no block');
  const numbers = blocks.map((b) => b.number);
  const duplicates = numbers.length - new Set(numbers).size;
  let gaps = 0;
  for (let n = first; n <= head; n += 1) if (!numbers.includes(n)) gaps += 1;
  numbers.forEach((n, i) => {
    if (i > 0 && n <= (numbers[i - 1] ?? 0)) wrong.push(`block ${n} after block ${numbers[i - 1]}`);
  });
  const canonical = await canonicalHashes(anvil, first, head);
  for (const b of blocks) if (canonical.get(b.number) !== b.hash) wrong.push(`block ${b.number} hash ${b.hash} is not canonical`);
  return { first, blocks: blocks.length, duplicates, gaps, wrong };
}
