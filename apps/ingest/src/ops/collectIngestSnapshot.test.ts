import { describe, expect, it } from 'vitest';
import { OPS_SNAPSHOT_MAX_BYTES, opsSnapshotSchema } from '@streamgate/ops';
import type { EvmStreamView } from '../evm/EvmAdapter.js';
import type { VenueView } from '../venue/VenueView.js';
import { collectIngestSnapshot } from './collectIngestSnapshot.js';
import type { IngestOpsSource } from './collectIngestSnapshot.js';

const chain = (stream: string, over: Partial<EvmStreamView> = {}): EvmStreamView => ({
  stream,
  chain: 'eth',
  state: 'active',
  provider: 'p0',
  preferredProvider: 'p0',
  onPreferred: true,
  head: 100,
  lastWritten: 100,
  failovers: 0,
  gaps: 0,
  reorgs: 0,
  ...over,
});

const venue = (name: string, over: Partial<VenueView> = {}): VenueView => ({
  venue: name,
  sessions: [{ id: `${name}-0-aaaa`, symbols: 2, connected: true }],
  wanted: 2,
  covered: 2,
  byKind: { snapshot: 2, quote: 2 },
  ...over,
});

function source(over: Partial<IngestOpsSource> = {}): IngestOpsSource {
  return {
    pod: 'ingest-a',
    startedAt: 1_000,
    now: () => 5_000,
    leasesHeld: () => 3,
    chains: () => [],
    venues: () => [],
    ...over,
  };
}

describe('collectIngestSnapshot', () => {
  it('is a schema-valid ingest snapshot of what the sources say, numbered by seq', () => {
    const snapshot = collectIngestSnapshot(
      source({ chains: () => [chain('evm:eth:heads', { failovers: 2, gaps: 1, reorgs: 3 })], venues: () => [venue('sim')] }),
      7,
    );
    expect(opsSnapshotSchema.parse(snapshot)).toEqual(snapshot);
    expect(snapshot).toEqual({
      kind: 'ingest',
      v: 1,
      pod: 'ingest-a',
      at: 5_000,
      startedAt: 1_000,
      seq: 7,
      truncated: false,
      leasesHeld: 3,
      chains: [
        {
          stream: 'evm:eth:heads',
          chain: 'eth',
          state: 'active',
          provider: 'p0',
          preferredProvider: 'p0',
          onPreferred: true,
          head: 100,
          lastWritten: 100,
          failovers: 2,
          gaps: 1,
          reorgs: 3,
        },
      ],
      venues: [
        {
          venue: 'sim',
          sessions: [{ id: 'sim-0-aaaa', symbols: 2, connected: true }],
          wanted: 2,
          coverage: { snapshot: 2, quote: 2, any: 2 },
        },
      ],
    });
  });

  it('sorts chain streams worst first: by state, then how far behind the head, then trouble counted', () => {
    const snapshot = collectIngestSnapshot(
      source({
        chains: () => [
          chain('a:active'),
          chain('b:active-behind', { lastWritten: 90 }),
          chain('c:active-failovers', { failovers: 4 }),
          chain('d:connecting', { state: 'connecting', provider: null, head: null, lastWritten: null }),
          chain('e:backfilling', { state: 'backfilling', provider: null }),
          chain('f:switching', { state: 'switching', provider: null }),
          chain('g:degraded', { state: 'degraded', provider: null }),
        ],
      }),
      0,
    );
    expect(snapshot.chains.map((c) => c.stream)).toEqual([
      'g:degraded',
      'f:switching',
      'e:backfilling',
      'd:connecting',
      'b:active-behind',
      'c:active-failovers',
      'a:active',
    ]);
  });

  it('puts venues with disconnected sessions or uncovered symbols first, and disconnected sessions first within a venue', () => {
    const snapshot = collectIngestSnapshot(
      source({
        venues: () => [
          venue('fine'),
          venue('uncovered', { wanted: 5, covered: 1 }),
          venue('down', {
            sessions: [
              { id: 'down-0', symbols: 10, connected: true },
              { id: 'down-1', symbols: 0, connected: false },
              { id: 'down-2', symbols: 30, connected: true },
            ],
          }),
        ],
      }),
      0,
    );
    expect(snapshot.venues.map((v) => v.venue)).toEqual(['down', 'uncovered', 'fine']);
    expect(snapshot.venues[0]?.sessions.map((s) => s.id)).toEqual(['down-1', 'down-2', 'down-0']);
  });

  it('clips names longer than the schema allows instead of failing the whole snapshot', () => {
    const long = 'x'.repeat(500);
    const snapshot = collectIngestSnapshot(
      source({ pod: long, chains: () => [chain(`evm:${long}`, { chain: long, provider: long })], venues: () => [venue(long)] }),
      0,
    );
    expect(opsSnapshotSchema.safeParse(snapshot).success).toBe(true);
    expect(snapshot.pod).toHaveLength(120);
    expect(snapshot.chains[0]?.stream).toHaveLength(200);
  });

  it('cuts the least worrying entries to stay under the size bound, and says so', () => {
    const chains = Array.from({ length: 200 }, (_, i) =>
      chain(`evm:eth:stream-with-a-long-name-${String(i).padStart(3, '0')}`, i === 150 ? { state: 'degraded', provider: null } : {}),
    );
    const snapshot = collectIngestSnapshot(source({ chains: () => chains }), 0);
    expect(snapshot.truncated).toBe(true);
    expect(opsSnapshotSchema.safeParse(snapshot).success).toBe(true);
    expect(Buffer.byteLength(JSON.stringify(snapshot))).toBeLessThanOrEqual(OPS_SNAPSHOT_MAX_BYTES);
    expect(snapshot.chains[0]?.stream).toBe('evm:eth:stream-with-a-long-name-150');
  });
});
