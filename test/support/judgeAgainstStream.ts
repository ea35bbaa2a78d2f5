import type { StreamId } from '@streamgate/protocol';

/** What one subscription received, in order: entries, and the notices that it lost some. */
export interface Received {
  readonly items: Array<{ kind: 'event'; id: StreamId } | { kind: 'notice'; notice: 'stream_reset' | 'reset' | 'truncated' }>;
}

/** `whole`: never told of a loss; `reset`/`truncated`: told so (truncated if any notice said it). */
export type Outcome = 'whole' | 'reset' | 'truncated';

/**
 * Judges a subscription against the stream as it finally is (`final`, every id oldest first).
 * What it received after its last notice (or all of it, without one) must be a contiguous run of
 * the final stream that reaches its end: once each, in order, nothing missing; after a notice
 * the run starts at the first entry (nothing was trimmed in these tests). Whatever came before
 * the last notice may hold entries the stream lost: the client was told. `problem` says how it
 * diverged silently, null if it did not.
 */
export function judgeAgainstStream(received: Received, final: readonly StreamId[]): { outcome: Outcome; problem: string | null } {
  const items = received.items;
  let last = -1;
  for (let i = items.length - 1; i >= 0 && last < 0; i--) if (items[i]?.kind === 'notice') last = i;
  const told = items.filter((x) => x.kind === 'notice');
  const outcome: Outcome = told.length === 0 ? 'whole' : told.some((x) => x.notice === 'truncated') ? 'truncated' : 'reset';
  const run = items.slice(last + 1).flatMap((x) => (x.kind === 'event' ? [x.id] : []));
  if (run.length === 0) return { outcome, problem: final.length === 0 ? null : 'received nothing of the final stream' };
  const start = final.indexOf(run[0] as StreamId);
  if (start < 0) return { outcome, problem: `holds ${run[0]}, not in the final stream, with no notice after it` };
  if (last >= 0 && start !== 0) return { outcome, problem: `after its notice it restarted at ${run[0]}, not at the first entry` };
  for (let k = 0; k < run.length; k++) {
    const want = final[start + k];
    if (run[k] === want) continue;
    const got = run[k] as StreamId;
    const where = final.indexOf(got);
    if (where < 0) return { outcome, problem: `holds ${got}, not in the final stream, with no notice after it` };
    return {
      outcome,
      problem: where > start + k ? `lacks ${want} (got ${got} next) and was not told` : `got ${got} twice or out of order`,
    };
  }
  if (start + run.length < final.length) return { outcome, problem: `lacks ${final.length - start - run.length} entries at the end` };
  return { outcome, problem: null };
}
