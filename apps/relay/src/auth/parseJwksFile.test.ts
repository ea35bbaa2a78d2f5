import { describe, expect, it } from 'vitest';
import { exportJWK, generateKeyPair } from 'jose';
import { parseJwksFile } from './parseJwksFile.js';

const es = await generateKeyPair('ES256', { extractable: true });
const ed = await generateKeyPair('EdDSA', { extractable: true });
const esPublic = { ...(await exportJWK(es.publicKey)), kid: 'es-1', alg: 'ES256', use: 'sig' };
const edPublic = { ...(await exportJWK(ed.publicKey)), kid: 'ed-1' };
const esPrivate = { ...(await exportJWK(es.privateKey)), kid: 'es-1', alg: 'ES256' };

const parse = (doc: unknown): string => {
  const result = parseJwksFile('/keys.json', typeof doc === 'string' ? doc : JSON.stringify(doc));
  return result.ok ? `ok ${result.jwks.keys.map((k) => k.kid).join(',')}` : result.message;
};

describe('parseJwksFile', () => {
  it('accepts the JWKS document the auth service publishes, ES256 and EdDSA public keys with kids', () => {
    expect(parse({ keys: [esPublic, edPublic] })).toBe('ok es-1,ed-1');
    // An empty set is a relay that refuses every token (token_kid_unknown), not a broken file.
    expect(parse({ keys: [] })).toBe('ok ');
  });

  it('refuses what a relay must not load, naming the file and the member', () => {
    expect(parse('{"keys":')).toMatch(/^RELAY_JWKS_FILE \/keys.json is not JSON/);
    expect(parse([esPublic])).toMatch(/\(document\)|keys/);
    expect(parse({ keys: [{ ...esPublic, kid: undefined }] })).toMatch(/keys\.0\.kid/);
    expect(parse({ keys: [esPrivate] })).toMatch(/keys\.0\.d: private key material/);
    expect(parse({ keys: [{ ...esPublic, alg: 'RS256' }] })).toMatch(/keys\.0\.alg/);
    expect(parse({ keys: [{ kty: 'RSA', n: 'AQAB', e: 'AQAB', kid: 'r' }] })).toMatch(/keys\.0\.kty/);
    expect(parse({ keys: [esPublic, { ...edPublic, kid: 'es-1' }] })).toMatch(/every kid must be unique/);
  });
});
