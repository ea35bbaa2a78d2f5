import { describe, expect, it } from 'vitest';
import { SignJWT, generateKeyPair, importJWK } from 'jose';
import { waitFor } from '@streamgate/testkit';
import type { ErrorCode } from '@streamgate/protocol';
import { metricValue, useFleet } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import { publishSequence } from './support/publishSequence.js';
import { openRawSocket } from './support/rawSocket.js';
import { mintToken } from './support/mintToken.js';

const getFleet = useFleet({ relays: 1 });

const b64 = (json: unknown): string => Buffer.from(JSON.stringify(json)).toString('base64url');
const authFailures = (metrics: string, reason: string): number =>
  metricValue(metrics, 'streamgate_relay_auth_failures_total', `reason="${reason}"`);

interface RefusalCase {
  readonly sid: string;
  readonly code: ErrorCode;
  /** The frame to send, without its sid. */
  readonly frame: { op: 'subscribe'; token?: string } | { op: 'refresh'; token: string; target: string };
}

describe('refusal matrix', () => {
  it('refuses every forged, misused or mismatched token with its code, counts it, and keeps a bystander whole', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const stream = 'refusal-matrix';
    const demoStream = `demo:${stream}`;
    const bystander = record(fleet, [relay.url], stream);
    await waitFor(() => bystander.sub.state === 'live', { timeoutMs: 10_000, message: 'bystander never went live' });

    const now = Math.floor(Date.now() / 1000);
    const good = await fleet.trpc.demo.token.query({ stream, user: 'eve' });
    const [header, payload, signature] = good.token.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
    // The key confusion attack: the relay's own public key (as served by the JWKS) used as an HMAC secret.
    const jwks = (await (await fetch(`${fleet.authUrl}/.well-known/jwks.json`)).json()) as { keys: Array<{ kid?: string }> };
    const publicJwk = jwks.keys.find((k) => k.kid === fleet.signingKey.kid);
    if (publicJwk === undefined) throw new Error('auth does not publish its signing key');
    const hs256 = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', kid: fleet.signingKey.kid, typ: 'JWT' })
      .sign(new TextEncoder().encode(JSON.stringify(publicJwk)));
    const stranger = await generateKeyPair('ES256', { extractable: true });
    const unknownKid = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'ES256', kid: 'nobody-knows-me', typ: 'JWT' })
      .sign(stranger.privateKey);
    const mint = (over: Parameters<typeof mintToken>[1]): Promise<string> => mintToken(fleet.signingKey, over);
    const noKid = await new SignJWT(claims)
      .setProtectedHeader({ alg: fleet.signingKey.alg, typ: 'JWT' })
      .sign(await importJWK(fleet.signingKey, fleet.signingKey.alg));
    const base = { stream: demoStream, redis: fleet.redis.url };
    const otherStream = await fleet.trpc.demo.token.query({ stream: `${stream}-other`, user: 'eve' });
    // Same stream and Redis, signed by the auth key, but for another user.
    const otherSubject = await mint({ ...base, sub: 'mallory' });

    const cases: RefusalCase[] = [
      { sid: 'no-token', code: 'token_missing', frame: { op: 'subscribe' } },
      { sid: 'empty-token', code: 'token_missing', frame: { op: 'subscribe', token: '' } },
      { sid: 'garbage', code: 'token_malformed', frame: { op: 'subscribe', token: 'this is not a jwt' } },
      { sid: 'three-dots', code: 'token_malformed', frame: { op: 'subscribe', token: 'a.b.c' } },
      // alg none and HS256 share a code on purpose: both are "this algorithm is not in the relay's
      // configured set", the client's fix is the same, and a finer code would only teach a forger.
      {
        sid: 'alg-none',
        code: 'token_algorithm_not_allowed',
        frame: { op: 'subscribe', token: `${b64({ alg: 'none', kid: fleet.signingKey.kid, typ: 'JWT' })}.${payload}.` },
      },
      { sid: 'hs256-public-key', code: 'token_algorithm_not_allowed', frame: { op: 'subscribe', token: hs256 } },
      { sid: 'wrong-aud', code: 'token_audience_invalid', frame: { op: 'subscribe', token: await mint({ ...base, aud: 'someone-else' }) } },
      {
        sid: 'wrong-iss',
        code: 'token_issuer_invalid',
        frame: { op: 'subscribe', token: await mint({ ...base, iss: 'https://evil.example' }) },
      },
      { sid: 'expired', code: 'token_expired', frame: { op: 'subscribe', token: await mint({ ...base, iat: now - 600, exp: now - 300 }) } },
      {
        sid: 'not-yet-valid',
        code: 'token_not_yet_valid',
        frame: { op: 'subscribe', token: await mint({ ...base, nbf: now + 600, exp: now + 900 }) },
      },
      { sid: 'unknown-kid', code: 'token_kid_unknown', frame: { op: 'subscribe', token: unknownKid } },
      {
        sid: 'tampered',
        code: 'token_signature_invalid',
        frame: { op: 'subscribe', token: `${header}.${b64({ ...claims, stream: 'demo:somebody-elses' })}.${signature}` },
      },
      {
        sid: 'redis-elsewhere',
        code: 'redis_not_allowed',
        frame: { op: 'subscribe', token: await mint({ ...base, redis: 'redis://10.20.30.40:6379/0' }) },
      },
      // kid is required (docs/protocol.md §10), even though this key set could be tried by type.
      { sid: 'no-kid', code: 'token_malformed', frame: { op: 'subscribe', token: noKid } },
      {
        sid: 'redis-credentials',
        code: 'token_claims_invalid',
        frame: { op: 'subscribe', token: await mint({ ...base, redis: 'redis://user:secret@10.20.30.40:6379/0' }) },
      },
      { sid: 'other-stream', code: 'token_stream_mismatch', frame: { op: 'refresh', token: otherStream.token, target: 'good' } },
      { sid: 'other-subject', code: 'token_subject_mismatch', frame: { op: 'refresh', token: otherSubject, target: 'good' } },
    ];

    const before = await relay.metrics();
    const socket = await openRawSocket(relay.url);
    let publishing: Promise<unknown> = Promise.resolve();
    const total = 2_000;
    try {
      // The refresh cases need a live subscription to refresh; it is live before publishing
      // starts, so it too must receive every event.
      socket.send(JSON.stringify({ op: 'subscribe', sid: 'good', token: good.token }));
      expect(await socket.next((f) => f.op === 'subscribed' && f.sid === 'good')).toMatchObject({ recovery: 'fresh' });
      await socket.next((f) => f.op === 'live' && f.sid === 'good');
      // Publishing runs while every refusal is answered.
      publishing = publishSequence(fleet.redis.client(), stream, 0, total, 5);

      for (const c of cases) {
        const { frame } = c;
        // A refresh's error names the subscription it is about; refresh one at a time so each answer is attributable.
        const text =
          frame.op === 'refresh'
            ? JSON.stringify({ op: 'refresh', sid: frame.target, token: frame.token })
            : JSON.stringify({ op: 'subscribe', sid: c.sid, ...(frame.token === undefined ? {} : { token: frame.token }) });
        const seen = socket.frames.length;
        socket.send(text);
        const sid = frame.op === 'refresh' ? frame.target : c.sid;
        const answer = await socket.next((f) => socket.frames.indexOf(f) >= seen && f.op === 'error' && f.sid === sid);
        expect({ case: c.sid, ...answer }).toMatchObject({ case: c.sid, op: 'error', sid, code: c.code, retryable: false });
      }

      // Refusals left the refreshed subscription on its old token and the socket serving.
      socket.send(JSON.stringify({ op: 'ping', t: 7 }));
      expect(await socket.next((f) => f.op === 'pong')).toMatchObject({ t: 7 });
      expect(socket.frames.filter((f) => f.op === 'refreshed' || f.op === 'unsubscribed')).toEqual([]);
      expect(socket.unparsed).toEqual([]);

      await publishing;
      await waitFor(() => bystander.seqs.length >= total, { timeoutMs: 30_000, message: 'bystander stopped receiving' });
      expect(gapsAndDuplicates(bystander.seqs, 0, total)).toBeNull();
      expect(bystander.errors).toEqual([]);

      // The socket that was refused at every case still got every event of its good subscription.
      const goodSeqs = (): number[] => socket.frames.flatMap((f) => (f.op === 'event' ? [(f.data as { seq: number }).seq] : []));
      await waitFor(() => goodSeqs().length >= total, { timeoutMs: 30_000, message: 'the refused socket lost its good subscription' });
      expect(gapsAndDuplicates(goodSeqs(), 0, total)).toBeNull();

      const after = await relay.metrics();
      const expected = new Map<string, number>();
      for (const c of cases) expected.set(c.code, (expected.get(c.code) ?? 0) + 1);
      for (const [reason, count] of expected) {
        expect({ reason, moved: authFailures(after, reason) - authFailures(before, reason) }).toEqual({ reason, moved: count });
      }
      expect(metricValue(after, 'streamgate_relay_token_refreshes_total', 'outcome="refused"')).toBe(2);
    } finally {
      // Awaited (and its failure reported) in the body; here only so that an early assertion
      // failure does not leave it running into the fleet's shutdown.
      await publishing.catch(() => undefined);
      socket.close();
      bystander.close();
    }
  });
});
