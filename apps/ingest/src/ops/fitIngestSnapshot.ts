import { fitList } from '@streamgate/ops';
import type { IngestSnapshot, IngestVenue } from '@streamgate/ops';

/** The list caps of ingestSnapshotSchema (zod does not expose them; the unit test holds them to it). */
export const INGEST_SNAPSHOT_CAPS = { chains: 64, venues: 16, sessions: 64 } as const;

const bytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

/** How many leading items fit in `budget` bytes, a comma each. */
function fittingPrefix(sizes: readonly number[], budget: number): number {
  let used = 0;
  let n = 0;
  for (const size of sizes) {
    if (used + size + 1 > budget) break;
    used += size + 1;
    n++;
  }
  return n;
}

/**
 * Cuts the snapshot's lists (already sorted worst-first) to the schema's caps, then, if its JSON
 * is still over `maxBytes`, keeps the longest leading part of each list that fits: chains and
 * venues get half of the room each, and what one list does not need goes to the other. Any
 * cut sets `truncated`.
 */
export function fitIngestSnapshot(snapshot: IngestSnapshot, maxBytes: number): IngestSnapshot {
  let truncated = snapshot.truncated;
  const venues: IngestVenue[] = snapshot.venues.map((venue) => {
    const sessions = fitList(venue.sessions, INGEST_SNAPSHOT_CAPS.sessions);
    truncated ||= sessions.truncated;
    return { ...venue, sessions: sessions.items };
  });
  const capped = { chains: fitList(snapshot.chains, INGEST_SNAPSHOT_CAPS.chains), venues: fitList(venues, INGEST_SNAPSHOT_CAPS.venues) };
  truncated ||= capped.chains.truncated || capped.venues.truncated;
  const fitted: IngestSnapshot = { ...snapshot, truncated, chains: capped.chains.items, venues: capped.venues.items };
  if (bytes(fitted) <= maxBytes) return fitted;

  const room = maxBytes - bytes({ ...fitted, truncated: true, chains: [], venues: [] });
  const chainSizes = fitted.chains.map(bytes);
  const venueSizes = fitted.venues.map(bytes);
  const need = (sizes: readonly number[]) => sizes.reduce((sum, size) => sum + size + 1, 0);
  const chainRoom = Math.max(room / 2, room - need(venueSizes));
  const chains = fitList(fitted.chains, fittingPrefix(chainSizes, chainRoom));
  const chainsUsed = need(chainSizes.slice(0, chains.items.length));
  const kept = fitList(fitted.venues, fittingPrefix(venueSizes, room - chainsUsed));
  return { ...fitted, truncated: true, chains: chains.items, venues: kept.items };
}
