import type { Fence, StreamWriter, WriteBatch, WriteOutcome } from '../StreamWriter.js';

/** The write step's contract in memory, for unit tests of adapters and the worker. */
export class MemoryStreamWriter implements StreamWriter {
  readonly streams = new Map<string, { id: string; data: string }[]>();
  readonly fences = new Map<string, number>();
  private readonly states = new Map<string, Map<string, string>>();
  private readonly seen = new Set<string>();
  private seq = 0;

  async write(fence: Fence, batch: WriteBatch): Promise<WriteOutcome> {
    await Promise.resolve();
    const current = this.fences.get(fence.key);
    if (current !== fence.token) {
      return { ok: false, error: { code: 'fenced', retryable: false, message: `stale token ${fence.token}` } };
    }
    const stream = this.streams.get(fence.key) ?? [];
    this.streams.set(fence.key, stream);
    const ids: (string | null)[] = [];
    let duplicates = 0;
    for (const entry of batch.entries) {
      const dk = `${fence.key}\u0000${entry.dedupeId}`;
      if (this.seen.has(dk)) {
        duplicates += 1;
        ids.push(null);
        continue;
      }
      this.seen.add(dk);
      const id = `${++this.seq}-0`;
      stream.push({ id, data: entry.data });
      ids.push(id);
    }
    const state = this.states.get(fence.key) ?? new Map<string, string>();
    this.states.set(fence.key, state);
    for (const [field, value] of Object.entries(batch.stateSet ?? {})) state.set(field, value);
    for (const field of batch.stateDel ?? []) state.delete(field);
    return { ok: true, written: batch.entries.length - duplicates, duplicates, ids };
  }

  async loadState({ key }: Fence): Promise<Map<string, string>> {
    await Promise.resolve();
    return new Map(this.states.get(key));
  }
}
