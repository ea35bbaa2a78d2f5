import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { SubscriptionState } from '@streamgate/client';
import type { DemoEvent } from '@streamgate/auth';
import { demoStream } from '@streamgate/auth';
import { waitFor } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import { gapsAndDuplicates } from './support/recorder.js';
import { publishSequence } from './support/publishSequence.js';
import { mintToken } from './support/mintToken.js';
import { openRawSocket } from './support/rawSocket.js';

// Tokens live 4 s, so three expiries pass in about 12 s of test time.
const TTL_SECONDS = 4;
// No clock skew: a subscription lives until exp plus the skew, and these tokens live seconds.
const getFleet = useFleet({
  authEnv: { AUTH_TOKEN_TTL_SECONDS: String(TTL_SECONDS) },
  relayEnv: { RELAY_REFRESH_LEAD_SECONDS: '2', RELAY_CLOCK_SKEW_SECONDS: '0' },
});

describe('token refresh in place', () => {
  it('keeps one subscription alive across three token expiries on one socket, with no gap', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const stream = 'refresh-three-expiries';
    const redis = fleet.redis.client();
    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    const seqs: number[] = [];
    const states: SubscriptionState[] = [];
    const tokens: Array<{ expiresAt: number }> = [];
    const before = await relay.metrics();
    const sub = client.subscribe<DemoEvent>({
      getToken: async () => {
        const token = await fleet.trpc.demo.token.query({ stream, user: 'alice' });
        tokens.push({ expiresAt: token.expiresAt });
        return token;
      },
      onEvent: (data) => seqs.push(data.seq),
      onStateChange: (state) => states.push(state),
    });
    try {
      await waitFor(() => sub.state === 'live', { timeoutMs: 10_000, message: 'never went live' });
      const firstExpiry = tokens[0]?.expiresAt;
      if (firstExpiry === undefined) throw new Error('no token fetched');

      // Publish steadily until the third token past the first has been in use for a while.
      let seq = 0;
      while (Date.now() < firstExpiry + 3 * TTL_SECONDS * 1000 + 500) {
        await publishSequence(redis, stream, seq, seq + 20, 20);
        seq += 20;
        await waitFor(() => seqs.length === seq, { timeoutMs: 5_000, message: `events up to ${seq} never arrived` });
      }
      expect(gapsAndDuplicates(seqs, 0, seq)).toBeNull();
      // Every expiry passed on the same socket: the subscription never left `live`.
      expect(states.slice(states.indexOf('live'))).toEqual(['live']);
      expect(tokens.length).toBeGreaterThanOrEqual(4);
      const after = await relay.metrics();
      const refreshed = (m: string, outcome: string): number =>
        metricValue(m, 'streamgate_relay_token_refreshes_total', `outcome="${outcome}"`);
      expect(refreshed(after, 'ok') - refreshed(before, 'ok')).toBeGreaterThanOrEqual(3);
      expect(refreshed(after, 'expired') - refreshed(before, 'expired')).toBe(0);
      // One socket all along: the relay counted exactly one connection for this client.
      expect(metricValue(after, 'streamgate_relay_connections')).toBe(1);
    } finally {
      client.close();
    }
  });

  it('ends a subscription whose token expires unrefreshed with reason token_expired, and keeps the socket', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const stream = demoStream.for('refresh-never').name;
    const now = Math.floor(Date.now() / 1000);
    const token = await mintToken(fleet.signingKey, { stream, redis: fleet.redis.url, iat: now, exp: now + 3 });
    const socket = await openRawSocket(relay.url);
    try {
      socket.send(JSON.stringify({ op: 'subscribe', sid: 'a', token }));
      await socket.next((f) => f.op === 'subscribed');
      await socket.next((f) => f.op === 'refresh_token' && f.sid === 'a', 5_000);
      const ended = await socket.next((f) => f.op === 'unsubscribed', 6_000);
      expect(ended).toEqual({ op: 'unsubscribed', sid: 'a', reason: 'token_expired' });
      // The socket itself stays usable.
      socket.send(JSON.stringify({ op: 'ping', t: 7 }));
      await socket.next((f) => f.op === 'pong');
    } finally {
      socket.close();
    }
  });

  it('refuses a refresh naming another stream or another subject, and keeps the subscription on its old token', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const stream = demoStream.for('refresh-mismatch').name;
    const now = Math.floor(Date.now() / 1000);
    const mint = (claims: { stream?: string; sub?: string }): Promise<string> =>
      mintToken(fleet.signingKey, {
        stream: claims.stream ?? stream,
        sub: claims.sub ?? 'alice',
        redis: fleet.redis.url,
        iat: now,
        exp: now + 60,
      });
    const socket = await openRawSocket(relay.url);
    try {
      socket.send(JSON.stringify({ op: 'subscribe', sid: 'm', token: await mint({}) }));
      await socket.next((f) => f.op === 'subscribed');
      socket.send(JSON.stringify({ op: 'refresh', sid: 'm', token: await mint({ stream: demoStream.for('elsewhere').name }) }));
      const otherStream = await socket.next((f) => f.op === 'error' && f.sid === 'm');
      expect(otherStream).toMatchObject({ code: 'token_stream_mismatch' });
      socket.send(JSON.stringify({ op: 'refresh', sid: 'm', token: await mint({ sub: 'mallory' }) }));
      await socket.next((f) => f.op === 'error' && f.sid === 'm' && f.code === 'token_subject_mismatch');
      socket.send(JSON.stringify({ op: 'refresh', sid: 'm', token: await mint({}) }));
      await socket.next((f) => f.op === 'refreshed' && f.sid === 'm');
      expect(socket.frames.filter((f) => f.op === 'unsubscribed')).toEqual([]);
    } finally {
      socket.close();
    }
  });
});
