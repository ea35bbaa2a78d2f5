import type { IngestChainStream, IngestSnapshot, OpsSnapshot, RelaySnapshot } from '@streamgate/ops';
import { ingestSnapshot, relaySnapshot } from '../support/opsSnapshots.js';

// The pretend pods of dashboard.test.ts: what two relays and an ingest worker report at each
// tick. The test's steps change these figures and the page must follow.

/** Snapshots dated before this are the pods' past (HISTORY_S of it), written at once. */
export let liveSince = Number.POSITIVE_INFINITY;
export const HISTORY_S = 90;
/** What the pretend pods report at each tick; the steps below change it. */
export const relayA = { connections: 120, subscriptions: 150, streamsWatched: 7, deliveriesPerSecond: 42.5, deliveriesTotal: 10_000 };
export const relayB: { connections: number; ready: boolean; drain: RelaySnapshot['drain'] } = { connections: 80, ready: true, drain: null };
export const sessions = [
  { id: 'sim-0', symbols: 20, connected: true },
  { id: 'sim-1', symbols: 12, connected: true },
];
export const chain: IngestChainStream = {
  stream: 'chain:31337:heads',
  chain: 'anvil-31337',
  state: 'active',
  provider: 'alpha',
  preferredProvider: 'alpha',
  onPreferred: true,
  head: 120,
  lastWritten: 120,
  failovers: 0,
  gaps: 0,
  reorgs: 1,
};

export function ingestState(): IngestSnapshot {
  return ingestSnapshot('ingest-0', {
    leasesHeld: 3,
    chains: [{ ...chain }],
    venues: [
      {
        venue: 'sim',
        sessions: sessions.map((session) => ({ ...session })),
        wanted: 32,
        coverage: { trades: 32, book: 20 },
      },
    ],
  });
}

/** A slow swell, so the charts' minutes of history have a shape; 1 at liveSince, where it meets the live figures. */
const swell = (at: number, periodS: number, amplitude: number) =>
  1 + amplitude * Math.sin(((at - liveSince) / 1_000 / periodS) * 2 * Math.PI);

export function relayAState(at: number): OpsSnapshot {
  relayA.deliveriesTotal += 17;
  const live = at >= liveSince;
  return relaySnapshot('relay-a', {
    ...relayA,
    connections: live ? relayA.connections : Math.round(relayA.connections * swell(at, 40, 0.25)),
    deliveriesPerSecond: live ? relayA.deliveriesPerSecond : Math.round(relayA.deliveriesPerSecond * swell(at, 25, 0.3) * 10) / 10,
    refusals: { token_expired: 3, rate_limited: 1 },
    readModes: [{ target: '127.0.0.1:6379/0', mode: 'notify' }],
  });
}

export function relayBState(at: number): OpsSnapshot {
  const live = at >= liveSince;
  return relaySnapshot('relay-b', {
    connections: live ? relayB.connections : Math.round(relayB.connections * swell(at, 40, -0.2)),
    subscriptions: relayB.connections,
    streamsWatched: 5,
    deliveriesPerSecond: relayB.drain !== null ? 4 : live ? 17 : Math.round(17 * swell(at, 30, -0.35) * 10) / 10,
    deliveriesTotal: 5_000,
    readModes: [{ target: 'redis-b:6379/0', mode: 'batch' }],
    ready: relayB.ready,
    drain: relayB.drain,
  });
}

/** The pods' past ends now: snapshots dated from here on are live. */
export function goLive(): void {
  liveSince = Date.now();
}
