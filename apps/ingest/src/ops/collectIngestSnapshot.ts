import { OPS_SNAPSHOT_MAX_BYTES } from '@streamgate/ops';
import type { IngestChainStream, IngestSnapshot, IngestVenue } from '@streamgate/ops';
import type { EvmStreamView } from '../evm/EvmAdapter.js';
import type { FailoverState } from '../evm/evmEvents.js';
import type { VenueView } from '../venue/VenueView.js';
import { fitIngestSnapshot } from './fitIngestSnapshot.js';

/** What the worker's owners of state answer, read once per snapshot. */
export interface IngestOpsSource {
  /** The worker id: unique in the fleet, the lease holder's name. */
  readonly pod: string;
  readonly startedAt: number;
  now(): number;
  /** Stream leases and venue leases this worker holds. */
  leasesHeld(): number;
  /** The EVM streams this worker runs. */
  chains(): readonly EvmStreamView[];
  /** The venues whose feed runs on this worker. */
  venues(): readonly VenueView[];
}

const LABEL_MAX = 120;
const STREAM_MAX = 200;
const clip = (text: string, max: number): string => (text.length <= max ? text : text.slice(0, max));

/** Worst first: what is cut to fit the size bound is what an operator needs least. */
const STATE_RANK: Record<FailoverState, number> = { degraded: 0, switching: 1, backfilling: 2, connecting: 3, active: 4 };

function chainWorstFirst(a: IngestChainStream, b: IngestChainStream): number {
  const behind = (c: IngestChainStream) => (c.head ?? 0) - (c.lastWritten ?? 0);
  return (
    STATE_RANK[a.state] - STATE_RANK[b.state] ||
    behind(b) - behind(a) ||
    b.gaps + b.failovers + b.reorgs - (a.gaps + a.failovers + a.reorgs) ||
    a.stream.localeCompare(b.stream)
  );
}

function venueWorstFirst(a: IngestVenue, b: IngestVenue): number {
  const down = (v: IngestVenue) => v.sessions.filter((s) => !s.connected).length;
  const uncovered = (v: IngestVenue) => v.wanted - (v.coverage.any ?? 0);
  return down(b) - down(a) || uncovered(b) - uncovered(a) || a.venue.localeCompare(b.venue);
}

function toChain(view: EvmStreamView): IngestChainStream {
  return {
    stream: clip(view.stream, STREAM_MAX),
    chain: clip(view.chain, LABEL_MAX),
    state: view.state,
    provider: view.provider === null ? null : clip(view.provider, LABEL_MAX),
    preferredProvider: view.preferredProvider === null ? null : clip(view.preferredProvider, LABEL_MAX),
    onPreferred: view.onPreferred,
    head: view.head,
    lastWritten: view.lastWritten,
    failovers: view.failovers,
    gaps: view.gaps,
    reorgs: view.reorgs,
  };
}

function toVenue(view: VenueView): IngestVenue {
  const sessions = view.sessions
    .map((s) => ({ id: clip(s.id, LABEL_MAX), symbols: s.symbols, connected: s.connected }))
    .sort((a, b) => Number(a.connected) - Number(b.connected) || b.symbols - a.symbols || a.id.localeCompare(b.id));
  const coverage: Record<string, number> = {};
  for (const [kind, count] of Object.entries(view.byKind)) if (count !== undefined) coverage[kind] = count;
  // The union, as in ingest_venue_coverage{kind="any"}: a symbol covered by some declared kind.
  coverage.any = view.covered;
  return { venue: clip(view.venue, LABEL_MAX), sessions, wanted: view.wanted, coverage };
}

/** The worker's snapshot number `seq`: its real state, lists worst-first and cut to fit `maxBytes`. */
export function collectIngestSnapshot(source: IngestOpsSource, seq: number, maxBytes = OPS_SNAPSHOT_MAX_BYTES): IngestSnapshot {
  return fitIngestSnapshot(
    {
      kind: 'ingest',
      v: 1,
      pod: clip(source.pod, LABEL_MAX),
      at: source.now(),
      startedAt: source.startedAt,
      seq,
      truncated: false,
      leasesHeld: source.leasesHeld(),
      chains: source.chains().map(toChain).sort(chainWorstFirst),
      venues: source.venues().map(toVenue).sort(venueWorstFirst),
    },
    maxBytes,
  );
}
