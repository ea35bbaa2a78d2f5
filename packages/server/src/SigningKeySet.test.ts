import { describe, expect, it } from 'vitest';
import { generateSigningKey } from './generateSigningKey.js';
import { jwksDocument } from './jwksDocument.js';
import { SigningKeySet } from './SigningKeySet.js';

async function load(input: unknown) {
  return SigningKeySet.fromJson(JSON.stringify(input));
}

function errorOf(result: Awaited<ReturnType<typeof load>>): string {
  if (result.ok) throw new Error('expected a failure');
  expect(result.error).toMatchObject({ code: 'signing_keys_invalid', retryable: false });
  return result.error.message;
}

describe('SigningKeySet', () => {
  it('loads ES256 and EdDSA keys; the first signs, all are published without private parts', async () => {
    const es = await generateSigningKey('ES256', 'es-1');
    const ed = await generateSigningKey('EdDSA', 'ed-1');
    const result = await load([es, ed]);
    if (!result.ok) throw new Error(result.error.message);
    expect(result.keys.current.kid).toBe('es-1');
    expect(result.keys.all.map((k) => k.kid)).toEqual(['es-1', 'ed-1']);
    const doc = jwksDocument(result.keys);
    expect(doc.keys).toEqual([
      { kty: 'EC', crv: 'P-256', x: es.x, y: es.y, kid: 'es-1', alg: 'ES256', use: 'sig' },
      { kty: 'OKP', crv: 'Ed25519', x: ed.x, kid: 'ed-1', alg: 'EdDSA', use: 'sig' },
    ]);
    expect(JSON.stringify(doc)).not.toContain('"d"');
  });

  it('accepts a JWKS object too', async () => {
    const result = await load({ keys: [await generateSigningKey('ES256', 'a')] });
    expect(result.ok).toBe(true);
  });

  it('names what is wrong with bad key material, without echoing secrets', async () => {
    const es = await generateSigningKey('ES256', 'k1');
    const other = await generateSigningKey('ES256', 'k2');
    expect(errorOf(await SigningKeySet.fromJson('not json'))).toMatch(/not valid JSON/);
    // The text around the fault would be key material: never quoted.
    expect(errorOf(await SigningKeySet.fromJson('SECRETKEYMATERIALabcdefgh'))).not.toMatch(/SECRET/);
    expect(errorOf(await SigningKeySet.fromJson('[{"d": SECRETKEY'))).not.toMatch(/SECRET/);
    expect(errorOf(await load({ kty: 'EC' }))).toMatch(/JSON array/);
    expect(errorOf(await load([]))).toMatch(/at least one/);
    const { d: _d, ...publicOnly } = es;
    expect(errorOf(await load([publicOnly]))).toMatch(/key\[0\] \(kid "k1"\): "d"/);
    const { kid: _kid, ...noKid } = es;
    expect(errorOf(await load([noKid]))).toMatch(/key\[0\]: "kid"/);
    expect(errorOf(await load([{ ...es, alg: 'RS256' }]))).toMatch(/alg must be "ES256" or "EdDSA"/);
    expect(errorOf(await load([{ ...es, crv: 'P-384' }]))).toMatch(/crv "P-256"/);
    expect(errorOf(await load([es, { ...other, kid: 'k1' }]))).toMatch(/kid "k1" is used by more than one key/);
    const ecMismatch = errorOf(await load([{ ...es, x: other.x, y: other.y }]));
    expect(ecMismatch).toMatch(/key\[0\] \(kid "k1"\): .*x, y and d belong to one P-256 key/);
    expect(ecMismatch).not.toContain(es.d);
    const ed = await generateSigningKey('EdDSA', 'e1');
    const otherEd = await generateSigningKey('EdDSA', 'e2');
    const edMismatch = errorOf(await load([{ ...ed, x: otherEd.x }]));
    expect(edMismatch).toMatch(/key\[0\] \(kid "e1"\): (public part \(x\) does not match|.*x and d belong)/);
    expect(edMismatch).not.toContain(ed.d);
  });
});
