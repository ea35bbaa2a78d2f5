import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { IngestMetrics } from './IngestMetrics.js';

const silent = pino({ level: 'silent' });

async function dedupeSeries(metrics: IngestMetrics): Promise<Record<string, number>> {
  const metric = await metrics.registry.getSingleMetric('ingest_dedupe_hits_total')?.get();
  return Object.fromEntries((metric?.values ?? []).map((v) => [`${String(v.labels.stream)}/${String(v.labels.where)}`, v.value]));
}

describe('IngestMetrics dedupe hits', () => {
  it('names the log that refused a written dedupe id: Redis by default', async () => {
    const metrics = new IngestMetrics(silent);
    metrics.evm.dedupeHits('chain:1', 'log', 2);
    metrics.evm.dedupeHits('chain:1', 'memory', 1);
    expect(await dedupeSeries(metrics)).toEqual({ 'chain:1/redis': 2, 'chain:1/memory': 1 });
  });

  it('names JetStream when entries are written there, and keeps memory hits apart', async () => {
    const metrics = new IngestMetrics(silent, 'jetstream');
    metrics.evm.dedupeHits('chain:1', 'log', 3);
    metrics.evm.dedupeHits('chain:1', 'memory', 1);
    expect(await dedupeSeries(metrics)).toEqual({ 'chain:1/jetstream': 3, 'chain:1/memory': 1 });
  });
});
