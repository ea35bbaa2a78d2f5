import { describe, expect, it } from 'vitest';
import { relayError } from '@streamgate/protocol';
import type { RelayClaims } from '@streamgate/protocol';
import { refreshVerdict } from './refreshVerdict.js';

const grant = { subject: 'user-1', stream: 'prices:btc', target: 'redis://a.test:6379/0' };

function claims(overrides: Partial<RelayClaims> = {}): RelayClaims {
  return {
    iss: 'issuer',
    aud: 'relay',
    sub: grant.subject,
    exp: 2_000,
    iat: 1_000,
    jti: 'j1',
    ver: 1,
    stream: grant.stream,
    redis: grant.target,
    ...overrides,
  };
}

describe('refreshVerdict', () => {
  it('lets a token for the same subject, stream and target take over', () => {
    const c = claims({ iat: 1_500, exp: 3_000 });
    expect(refreshVerdict(grant, { ok: true, claims: c })).toEqual({ outcome: 'ok', claims: c });
  });

  it('refuses with the verifier error when the token does not verify', () => {
    const error = relayError('token_expired', 'expired');
    expect(refreshVerdict(grant, { ok: false, error })).toEqual({ outcome: 'refused', error });
  });

  it('refuses a token for another subject or another stream', () => {
    const bySubject = refreshVerdict(grant, { ok: true, claims: claims({ sub: 'user-2' }) });
    expect(bySubject).toMatchObject({ outcome: 'refused', error: { code: 'token_subject_mismatch' } });
    const byStream = refreshVerdict(grant, { ok: true, claims: claims({ stream: 'prices:eth' }) });
    expect(byStream).toMatchObject({ outcome: 'refused', error: { code: 'token_stream_mismatch' } });
  });

  it('checks the subject before the stream, and both before the target', () => {
    const all = refreshVerdict(grant, {
      ok: true,
      claims: claims({ sub: 'user-2', stream: 'prices:eth', redis: 'redis://b.test:6379/0' }),
    });
    expect(all).toMatchObject({ outcome: 'refused', error: { code: 'token_subject_mismatch' } });
    const streamAndTarget = refreshVerdict(grant, { ok: true, claims: claims({ stream: 'prices:eth', redis: 'redis://b.test:6379/0' }) });
    expect(streamAndTarget).toMatchObject({ outcome: 'refused', error: { code: 'token_stream_mismatch' } });
  });

  it('says the stream moved when only the Redis target differs', () => {
    expect(refreshVerdict(grant, { ok: true, claims: claims({ redis: 'redis://b.test:6379/0' }) })).toEqual({ outcome: 'moved' });
  });
});
