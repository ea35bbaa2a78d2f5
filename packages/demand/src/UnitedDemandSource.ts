import type { DemandSource } from './DemandSource.js';

/**
 * Demand read from several sources at once (one registry per Redis target) and united. Relays
 * and auth record a stream's demand on the stream's own target (a JetStream target's streams: on
 * the one Redis named for them), so a target that cannot be read hides only the demand of streams
 * that could not be written there anyway: the others keep being served. Each failed source is reported to `onError`, except when every source fails: then
 * `demanded()` rejects with the first error (demand unknown) and reports nothing itself.
 */
export class UnitedDemandSource implements DemandSource {
  constructor(
    private readonly sources: readonly { readonly name: string; readonly source: DemandSource }[],
    private readonly onError: (name: string, error: unknown) => void,
  ) {
    if (sources.length === 0) throw new RangeError('UnitedDemandSource needs at least one source');
  }

  async demanded(): Promise<ReadonlySet<string>> {
    const reads = await Promise.allSettled(this.sources.map(({ source }) => source.demanded()));
    const united = new Set<string>();
    const failures: { name: string; error: unknown }[] = [];
    reads.forEach((read, i) => {
      if (read.status === 'fulfilled') for (const key of read.value) united.add(key);
      else failures.push({ name: this.sources[i]?.name ?? String(i), error: read.reason });
    });
    // All failed: the caller's own demand-error path reports it, once.
    if (failures.length === reads.length) throw failures[0]?.error;
    for (const { name, error } of failures) this.onError(name, error);
    return united;
  }
}
