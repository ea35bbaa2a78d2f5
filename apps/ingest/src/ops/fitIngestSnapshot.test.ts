import { describe, expect, it } from 'vitest';
import { ingestSnapshotSchema } from '@streamgate/ops';
import type { IngestChainStream, IngestSnapshot, IngestVenue } from '@streamgate/ops';
import { INGEST_SNAPSHOT_CAPS, fitIngestSnapshot } from './fitIngestSnapshot.js';

const chain = (i: number): IngestChainStream => ({
  stream: `evm:chain-${i}:${'h'.repeat(150)}`,
  chain: `chain-${i}`,
  state: 'active',
  provider: 'provider-a',
  preferredProvider: 'provider-a',
  onPreferred: true,
  head: 1_000_000 + i,
  lastWritten: 1_000_000 + i,
  failovers: i,
  gaps: 0,
  reorgs: 0,
});

const venue = (i: number, sessions: number): IngestVenue => ({
  venue: `venue-${i}`,
  sessions: Array.from({ length: sessions }, (_, s) => ({ id: `venue-${i}-${s}-0123abcd`, symbols: 100, connected: true })),
  wanted: 500,
  coverage: { snapshot: 500, quote: 500, tick: 500, any: 500 },
});

const snapshotOf = (chains: IngestChainStream[], venues: IngestVenue[]): IngestSnapshot => ({
  kind: 'ingest',
  v: 1,
  pod: 'ingest-a',
  at: 1,
  startedAt: 0,
  seq: 0,
  truncated: false,
  leasesHeld: chains.length,
  chains,
  venues,
});

const size = (s: IngestSnapshot) => Buffer.byteLength(JSON.stringify(s));

describe('fitIngestSnapshot', () => {
  it('leaves a snapshot that fits as it is', () => {
    const snapshot = snapshotOf([chain(0), chain(1)], [venue(0, 2)]);
    expect(fitIngestSnapshot(snapshot, 16_384)).toEqual(snapshot);
  });

  it("holds the lists to the schema's caps", () => {
    const big = snapshotOf(
      Array.from({ length: INGEST_SNAPSHOT_CAPS.chains + 1 }, (_, i) => chain(i)),
      Array.from({ length: INGEST_SNAPSHOT_CAPS.venues + 1 }, (_, i) => venue(i, INGEST_SNAPSHOT_CAPS.sessions + 1)),
    );
    expect(ingestSnapshotSchema.safeParse(big).success).toBe(false);
    const fitted = fitIngestSnapshot(big, Number.MAX_SAFE_INTEGER);
    expect(fitted.truncated).toBe(true);
    expect(fitted.chains).toHaveLength(INGEST_SNAPSHOT_CAPS.chains);
    expect(fitted.venues).toHaveLength(INGEST_SNAPSHOT_CAPS.venues);
    expect(fitted.venues.every((v) => v.sessions.length === INGEST_SNAPSHOT_CAPS.sessions)).toBe(true);
    expect(ingestSnapshotSchema.safeParse(fitted).success).toBe(true);
  });

  it.each([1_000, 4_096, 16_384])('keeps the leading part of each list under %i bytes, sharing the room', (maxBytes) => {
    const chains = Array.from({ length: 60 }, (_, i) => chain(i));
    const venues = Array.from({ length: 12 }, (_, i) => venue(i, 5));
    const fitted = fitIngestSnapshot(snapshotOf(chains, venues), maxBytes);
    expect(size(fitted)).toBeLessThanOrEqual(maxBytes);
    expect(fitted.truncated).toBe(true);
    expect(fitted.chains).toEqual(chains.slice(0, fitted.chains.length));
    expect(fitted.venues).toEqual(venues.slice(0, fitted.venues.length));
    if (maxBytes >= 4_096) {
      expect(fitted.chains.length).toBeGreaterThan(0);
      expect(fitted.venues.length).toBeGreaterThan(0);
    }
  });

  it('gives one list the room the other does not need', () => {
    const chains = Array.from({ length: 60 }, (_, i) => chain(i));
    const fitted = fitIngestSnapshot(snapshotOf(chains, [venue(0, 1)]), 8_192);
    expect(fitted.venues).toHaveLength(1);
    expect(size(fitted)).toBeLessThanOrEqual(8_192);
    // Not half the room: as many chains as fit beside the venue (one more would not).
    const next = chains[fitted.chains.length];
    if (next === undefined) throw new Error('every chain fitted; the test needs more');
    expect(size({ ...fitted, chains: [...fitted.chains, next] })).toBeGreaterThan(8_192);
    expect(fitted.chains.length).toBeGreaterThan(20);
  });
});
