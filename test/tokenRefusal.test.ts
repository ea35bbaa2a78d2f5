import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { useFleet } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import { publishSequence } from './support/publishSequence.js';
import { openRawSocket } from './support/rawSocket.js';
import { mintToken } from './support/mintToken.js';

const getFleet = useFleet({ relays: 1 });

describe('token refusals', () => {
  it('refuses a bad signature, an expired token and a Redis outside the allowlist, each with its own code, while others keep receiving', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const stream = 'refusals';
    const bystander = record(fleet, [relay.url], stream);
    await waitFor(() => bystander.sub.state === 'live', { timeoutMs: 10_000, message: 'bystander never went live' });
    const publishing = publishSequence(fleet.redis.client(), stream, 0, 1_000, 5);

    const good = await fleet.trpc.demo.token.query({ stream, user: 'eve' });
    const [header, payload, signature] = good.token.split('.') as [string, string, string];
    // Flip one signature character: still base64url, no longer the auth service's signature.
    const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11);
    const now = Math.floor(Date.now() / 1000);
    const expired = await mintToken(fleet.signingKey, { stream: `demo:${stream}`, redis: fleet.redis.url, iat: now - 600, exp: now - 300 });
    const elsewhere = await mintToken(fleet.signingKey, { stream: `demo:${stream}`, redis: 'redis://10.20.30.40:6379/0' });

    const socket = await openRawSocket(relay.url);
    try {
      const cases = [
        { sid: 'bad-signature', token: `${header}.${payload}.${flipped}`, code: 'token_signature_invalid' },
        { sid: 'expired', token: expired, code: 'token_expired' },
        { sid: 'not-allowed', token: elsewhere, code: 'redis_not_allowed' },
      ];
      for (const c of cases) socket.send(JSON.stringify({ op: 'subscribe', sid: c.sid, token: c.token }));
      for (const c of cases) {
        const frame = await socket.next((f) => f.op === 'error' && f.sid === c.sid);
        expect(frame).toMatchObject({ op: 'error', sid: c.sid, code: c.code, retryable: false });
      }
      // The same socket still serves a good token after the refusals.
      socket.send(JSON.stringify({ op: 'subscribe', sid: 'good', token: good.token }));
      expect(await socket.next((f) => f.op === 'subscribed' && f.sid === 'good')).toMatchObject({ recovery: 'fresh' });

      await publishing;
      await waitFor(() => bystander.seqs.length >= 1_000, { timeoutMs: 20_000, message: 'bystander stopped receiving' });
      expect(gapsAndDuplicates(bystander.seqs, 0, 1_000)).toBeNull();
      const metrics = await relay.metrics();
      for (const c of cases) expect(metrics).toMatch(new RegExp(`streamgate_relay_auth_failures_total\\{reason="${c.code}"\\} 1\\b`));
    } finally {
      socket.close();
      bystander.close();
    }
  });
});
