import { afterAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { Subscription } from '@streamgate/client';
import type { DemoEvent } from '@streamgate/auth';
import { createRevoker } from '@streamgate/server';
import type { Revoker } from '@streamgate/server';
import { waitFor } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import type { Fleet, FleetRelay } from './support/startFleet.js';
import { probeSubscribe } from './support/probeSubscribe.js';
import { openRawSocket } from './support/rawSocket.js';

const getFleet = useFleet({ relays: 2 });
const WITHIN_MS = 1_000;

let revoker: Revoker | undefined;
afterAll(async () => {
  await revoker?.close();
});

interface Watched {
  readonly sub: Subscription<DemoEvent>;
  readonly client: RelayClient;
  /** When the subscription ended with `revoked`, by the test's clock. */
  revokedAt: number | null;
  /** The last token `getToken` handed out. */
  token: string;
}

function watch(fleet: Fleet, relay: FleetRelay, stream: string, user: string): Watched {
  const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
  const watched: Watched = {
    client,
    revokedAt: null,
    token: '',
    sub: client.subscribe({
      getToken: async () => {
        const minted = await fleet.trpc.demo.token.query({ stream, user });
        watched.token = minted.token;
        return minted;
      },
      onEvent: () => undefined,
      onError: (error) => {
        if (error.code === 'revoked' && watched.revokedAt === null) watched.revokedAt = Date.now();
      },
    }),
  };
  return watched;
}

function relays(fleet: Fleet): [FleetRelay, FleetRelay] {
  const [a, b] = fleet.relays;
  if (a === undefined || b === undefined) throw new Error('two relays expected');
  return [a, b];
}

describe('revocation across two relays', () => {
  it('by subject: ended on both relays within 1 s, the old token refused, a new token accepted', async () => {
    const fleet = getFleet();
    const [a, b] = relays(fleet);
    revoker ??= createRevoker({ targets: fleet.redis.url, maxTokenLifetimeSeconds: 300, clockSkewSeconds: 30 });
    const alice = [watch(fleet, a, 'rev-subject-1', 'alice'), watch(fleet, b, 'rev-subject-2', 'alice')];
    const bob = [watch(fleet, a, 'rev-subject-1', 'bob'), watch(fleet, b, 'rev-subject-2', 'bob')];
    const all = [...alice, ...bob];
    try {
      await waitFor(() => all.every((w) => w.sub.state === 'live'), { timeoutMs: 15_000, message: 'subscriptions never went live' });
      const startedAt = Date.now();
      const result = await revoker.revoke({ subject: 'alice' });
      expect(result.ok).toBe(true);
      await waitFor(() => alice.every((w) => w.revokedAt !== null), { timeoutMs: 10_000, message: "alice's subscriptions were not ended" });
      const took = alice.map((w) => (w.revokedAt ?? 0) - startedAt);
      console.log(`revocation by subject: ended on the two relays ${took.join(' ms and ')} ms after revoke() was called`);
      for (const ms of took) expect(ms).toBeLessThanOrEqual(WITHIN_MS);
      expect(alice.map((w) => w.sub.state)).toEqual(['closed', 'closed']);
      expect(alice.map((w) => w.sub.error?.code)).toEqual(['revoked', 'revoked']);
      expect(bob.map((w) => w.sub.state)).toEqual(['live', 'live']);

      // The token alice held is refused on both relays for the rest of its life, at subscribe.
      for (const [i, relay] of [a, b].entries()) {
        const answer = await probeSubscribe(relay.url, alice[i]?.token ?? '');
        expect(answer).toMatchObject({ op: 'error', code: 'revoked', retryable: false });
      }
      // A token issued after the revocation works.
      const fresh = await fleet.trpc.demo.token.query({ stream: 'rev-subject-1', user: 'alice' });
      for (const relay of [a, b]) expect(await probeSubscribe(relay.url, fresh.token)).toMatchObject({ op: 'subscribed' });
      const again = watch(fleet, b, 'rev-subject-1', 'alice');
      all.push(again);
      await waitFor(() => again.sub.state === 'live', { timeoutMs: 10_000, message: 'a new token after the revocation did not work' });
      const ended = await Promise.all(
        [a, b].map(async (r) => metricValue(await r.metrics(), 'streamgate_relay_revoked_subscriptions_total')),
      );
      expect(ended).toEqual([1, 1]);
    } finally {
      for (const w of all) w.client.close();
    }
  });

  it('by stream: ended on both relays within 1 s for every subject, other streams untouched; a refresh with an old token is refused', async () => {
    const fleet = getFleet();
    const [a, b] = relays(fleet);
    revoker ??= createRevoker({ targets: fleet.redis.url, maxTokenLifetimeSeconds: 300, clockSkewSeconds: 30 });
    const onStream = [watch(fleet, a, 'rev-stream', 'carol'), watch(fleet, b, 'rev-stream', 'dave')];
    const other = [watch(fleet, a, 'rev-stream-other', 'carol'), watch(fleet, b, 'rev-stream-other', 'dave')];
    const all = [...onStream, ...other];
    try {
      await waitFor(() => all.every((w) => w.sub.state === 'live'), { timeoutMs: 15_000, message: 'subscriptions never went live' });
      // A token minted before the revocation, kept for a refresh afterwards.
      const oldOther = await fleet.trpc.demo.token.query({ stream: 'rev-stream', user: 'erin' });
      const startedAt = Date.now();
      expect((await revoker.revoke({ stream: 'demo:rev-stream' })).ok).toBe(true);
      await waitFor(() => onStream.every((w) => w.revokedAt !== null), {
        timeoutMs: 10_000,
        message: 'the stream subscriptions were not ended',
      });
      const took = onStream.map((w) => (w.revokedAt ?? 0) - startedAt);
      console.log(`revocation by stream: ended on the two relays ${took.join(' ms and ')} ms after revoke() was called`);
      for (const ms of took) expect(ms).toBeLessThanOrEqual(WITHIN_MS);
      expect(other.map((w) => w.sub.state)).toEqual(['live', 'live']);
      for (const relay of [a, b]) {
        expect(await probeSubscribe(relay.url, oldOther.token)).toMatchObject({ op: 'error', code: 'revoked' });
      }

      // Refresh included: a live subscription on the stream with a new token refuses a refresh with an old one.
      const fresh = await fleet.trpc.demo.token.query({ stream: 'rev-stream', user: 'erin' });
      const socket = await openRawSocket(a.url);
      try {
        socket.send(JSON.stringify({ op: 'subscribe', sid: 'r1', token: fresh.token }));
        await socket.next((f) => f.op === 'subscribed' && f.sid === 'r1');
        socket.send(JSON.stringify({ op: 'refresh', sid: 'r1', token: oldOther.token }));
        const refused = await socket.next((f) => f.op === 'error' && f.sid === 'r1');
        expect(refused).toMatchObject({ code: 'revoked', retryable: false });
      } finally {
        socket.close();
      }
    } finally {
      for (const w of all) w.client.close();
    }
  });

  it('a relay started after the revocation loads it and refuses the old token', async () => {
    const fleet = getFleet();
    revoker ??= createRevoker({ targets: fleet.redis.url, maxTokenLifetimeSeconds: 300, clockSkewSeconds: 30 });
    const old = await fleet.trpc.demo.token.query({ stream: 'rev-late', user: 'frank' });
    expect((await revoker.revoke({ subject: 'frank', stream: 'demo:rev-late' })).ok).toBe(true);
    const late = await fleet.startRelay();
    await waitFor(async () => (await probeSubscribe(late.url, old.token)).op === 'error', {
      timeoutMs: 10_000,
      message: 'the late relay accepted a revoked token',
    });
    expect(await probeSubscribe(late.url, old.token)).toMatchObject({ op: 'error', code: 'revoked' });
    const otherStream = await fleet.trpc.demo.token.query({ stream: 'rev-late-2', user: 'frank' });
    expect(await probeSubscribe(late.url, otherStream.token)).toMatchObject({ op: 'subscribed' });
  });
});
