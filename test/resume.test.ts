import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { useFleet } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import { publishSequence } from './support/publishSequence.js';

const getFleet = useFleet({ relays: 2 });

const relayUrl = (i: number): string => {
  const relay = getFleet().relays[i];
  if (relay === undefined) throw new Error(`no relay ${i}`);
  return relay.url;
};

describe('resume', () => {
  it('a client killed mid-stream and reconnected with its last id gets exactly what it missed, then live events', async () => {
    const fleet = getFleet();
    const stream = 'resume-kill';
    const redis = fleet.redis.client();
    const first = record(fleet, [relayUrl(0)], stream);
    await waitFor(() => first.sub.state === 'live', { timeoutMs: 10_000, message: 'first client never went live' });

    // Publishing runs throughout: before the kill, while the client is gone, and after it is back.
    const total = 3_000;
    const publishing = publishSequence(redis, stream, 0, total, 10);
    await waitFor(() => first.seqs.length >= 500, { timeoutMs: 20_000, message: 'first client got no events' });
    first.close();
    const seenBeforeKill = [...first.seqs];
    const lastId = first.sub.position;
    expect(lastId).toBeDefined();

    const second = record(fleet, [relayUrl(1)], stream, { from: lastId });
    try {
      await publishing;
      await waitFor(() => seenBeforeKill.length + second.seqs.length >= total, {
        timeoutMs: 30_000,
        message: 'resumed client never caught up',
      });
      expect(gapsAndDuplicates([...seenBeforeKill, ...second.seqs], 0, total)).toBeNull();
      expect(second.recoveries).toEqual([]);
      expect(second.sub.state).toBe('live');
      // Still live after the seam.
      await publishSequence(redis, stream, total, total + 10);
      await waitFor(() => seenBeforeKill.length + second.seqs.length === total + 10, {
        timeoutMs: 10_000,
        message: 'no live events after catch-up',
      });
      expect(gapsAndDuplicates([...seenBeforeKill, ...second.seqs], 0, total + 10)).toBeNull();
    } finally {
      second.close();
    }
  });

  it('a relay killed under a client: the client moves to the other relay and resumes with no gap and no duplicate', async () => {
    const fleet = getFleet();
    const stream = 'resume-relay-killed';
    const redis = fleet.redis.client();
    const victim = await fleet.startRelay();
    const survivor = relayUrl(0);
    const client = record(fleet, [victim.url, survivor], stream);
    try {
      await waitFor(() => client.sub.state === 'live', { timeoutMs: 10_000, message: 'client never went live' });
      const total = 2_000;
      const publishing = publishSequence(redis, stream, 0, total, 10);
      await waitFor(() => client.seqs.length >= 300, { timeoutMs: 20_000, message: 'client got no events' });
      victim.service.signal('SIGKILL');
      await publishing;
      await waitFor(() => client.seqs.length >= total, { timeoutMs: 30_000, message: 'client never caught up after the relay died' });
      expect(gapsAndDuplicates(client.seqs, 0, total)).toBeNull();
      expect(client.recoveries).toEqual([]);
    } finally {
      client.close();
    }
  });

  it('answers truncated when the resume id was trimmed away, and delivers from the oldest retained entry', async () => {
    const fleet = getFleet();
    const stream = 'resume-trimmed';
    const redis = fleet.redis.client();
    const ids = await publishSequence(redis, stream, 0, 100);
    await redis.xtrim(`demo:${stream}`, 'MAXLEN', 50);
    const client = record(fleet, [relayUrl(0)], stream, { from: ids[9] });
    try {
      await waitFor(() => client.seqs.length >= 50 && client.sub.state === 'live', {
        timeoutMs: 10_000,
        message: 'truncated client never went live',
      });
      expect(client.recoveries.map((r) => r.recovery)).toEqual(['truncated']);
      expect(gapsAndDuplicates(client.seqs, 50, 100)).toBeNull();
    } finally {
      client.close();
    }
  });

  it('answers reset for an id of a deleted and recreated stream', async () => {
    const fleet = getFleet();
    const stream = 'resume-recreated';
    const redis = fleet.redis.client();
    const oldIds = await publishSequence(redis, stream, 0, 20);
    // Redis reuses ids when a key is recreated within the same millisecond, and then no relay can
    // tell the incarnations apart (docs/protocol.md, recovery). Real recreations are further apart.
    const lastOldMs = Number(String(oldIds[oldIds.length - 1]).split('-')[0]);
    await waitFor(() => Date.now() > lastOldMs + 1, { timeoutMs: 1_000, message: 'clock did not move' });
    await redis.del(`demo:${stream}`);
    await publishSequence(redis, stream, 1_000, 1_010);
    const client = record(fleet, [relayUrl(1)], stream, { from: oldIds[15] });
    try {
      await waitFor(() => client.seqs.length >= 10 && client.sub.state === 'live', {
        timeoutMs: 10_000,
        message: () => `reset client never went live (state ${client.sub.state}, seqs ${client.seqs.join(',')})`,
      });
      expect(client.recoveries.map((r) => r.recovery)).toEqual(['reset']);
      expect(gapsAndDuplicates(client.seqs, 1_000, 1_010)).toBeNull();
    } finally {
      client.close();
    }
  });

  it('resumes from the last id when nothing is missing: recovered, no replay', async () => {
    const fleet = getFleet();
    const stream = 'resume-nothing-missed';
    const redis = fleet.redis.client();
    const ids = await publishSequence(redis, stream, 0, 5);
    const client = record(fleet, [relayUrl(0)], stream, { from: ids[4] });
    try {
      await waitFor(() => client.sub.state === 'live', { timeoutMs: 10_000, message: 'client never went live' });
      await publishSequence(redis, stream, 5, 8);
      await waitFor(() => client.seqs.length >= 3, { timeoutMs: 10_000, message: 'no live events' });
      expect(client.seqs).toEqual([5, 6, 7]);
      expect(client.recoveries).toEqual([]);
    } finally {
      client.close();
    }
  });
});
