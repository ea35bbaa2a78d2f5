import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { OpsSnapshot } from '@streamgate/ops';
import { relayClaimsSchema } from '@streamgate/protocol';
import type { RelaySubscription } from '@streamgate/protocol';
import { createTokenIssuer, generateSigningKey, SigningKeySet } from '@streamgate/server';
import { createAuthServer, JWKS_PATH } from '../createAuthServer.js';
import type { AuthServer } from '../createAuthServer.js';
import { createOpsContext, createOpsRouter, OPS_TOKEN_SUBJECT } from './createOpsRouter.js';
import type { OpsRouter, OpsRouterOptions } from './createOpsRouter.js';
import { sha256Hex } from './operatorCredential.js';

const ISSUER = 'https://auth.test';
const AUDIENCE = 'streamgate-relay';
const CREDENTIAL = 'correct horse battery staple';

type Started = { server: AuthServer; base: string; refused: string[]; counted: string[] };

async function serve(options: Pick<OpsRouterOptions, 'ops' | 'operatorCredentialSha256'>): Promise<Started> {
  const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k-ops')]);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const issuer = createTokenIssuer({ keys: loaded.keys, issuer: ISSUER, audience: AUDIENCE, redis: 'redis://127.0.0.1:6390' });
  const refused: string[] = [];
  const counted: string[] = [];
  const observer = {
    requested: ({ path }: { path: string }) => counted.push(`requested ${path}`),
    issued: ({ path }: { path: string }) => counted.push(`issued ${path}`),
    denied: ({ path }: { path: string }) => counted.push(`denied ${path}`),
  };
  const router = createOpsRouter({ issuer, ...options, observer, onRefused: (code) => refused.push(code) });
  const server = await createAuthServer({
    trpc: { router, createContext: createOpsContext },
    keys: loaded.keys,
    host: '127.0.0.1',
    port: 0,
  });
  return { server, base: `http://127.0.0.1:${server.port}`, refused, counted };
}

function clientFor(base: string, authorization?: string) {
  return createTRPCClient<OpsRouter>({
    links: [
      httpLink({
        url: `${base}/trpc`,
        headers: authorization === undefined ? {} : { authorization },
        fetch: (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(5000) }),
      }),
    ],
  });
}

async function codeOf(promise: Promise<unknown>): Promise<{ code: string | undefined; message: string }> {
  const error: unknown = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(error instanceof TRPCClientError)) throw new Error(`expected a TRPCClientError, got ${String(error)}`);
  const typed = error as TRPCClientError<OpsRouter>;
  return { code: typed.data?.code, message: typed.message };
}

describe('ops.token', () => {
  let on: Started;
  beforeAll(async () => {
    on = await serve({
      ops: { target: 'redis://ops.local:6379/2', stream: 'streamgate:ops' },
      operatorCredentialSha256: sha256Hex(CREDENTIAL),
    });
  });
  afterAll(async () => {
    await on?.server.close();
  });

  it('issues a relay token for the ops stream on the ops Redis to the operator credential, typed for OpsSnapshot', async () => {
    const sub = await clientFor(on.base, `Bearer ${CREDENTIAL}`).ops.token.query();
    expectTypeOf(sub).toEqualTypeOf<RelaySubscription<OpsSnapshot>>();
    expect(sub.stream).toBe('streamgate:ops');
    const jwks = createRemoteJWKSet(new URL(`${on.base}${JWKS_PATH}`), { timeoutDuration: 5000 });
    const { payload } = await jwtVerify(sub.token, jwks, { issuer: ISSUER, audience: AUDIENCE });
    expect(relayClaimsSchema.parse(payload)).toMatchObject({
      sub: OPS_TOKEN_SUBJECT,
      stream: 'streamgate:ops',
      redis: 'redis://ops.local:6379/2',
    });
  });

  it.each([
    ['no Authorization header', undefined, 'credential_missing'],
    ['a wrong credential', 'Bearer correct horse battery stapler', 'credential_wrong'],
    ['the credential without the Bearer scheme', CREDENTIAL, 'credential_missing'],
    ['an empty bearer', 'Bearer ', 'credential_missing'],
    ['the hash instead of the credential', `Bearer ${sha256Hex(CREDENTIAL)}`, 'credential_wrong'],
  ])('refuses %s with UNAUTHORIZED', async (_, authorization, reason) => {
    const before = on.refused.length;
    const countedBefore = on.counted.length;
    const refused = await codeOf(clientFor(on.base, authorization).ops.token.query());
    expect(refused.code).toBe('UNAUTHORIZED');
    expect(refused.message).not.toContain(CREDENTIAL);
    expect(on.refused.slice(before)).toEqual([reason]);
    // Counted as a request and a denial, as a refused demo.token is.
    expect(on.counted.slice(countedBefore)).toEqual(['requested ops.token', 'denied ops.token']);
  });

  it.each([
    [
      'AUTH_OPERATOR_CREDENTIAL_SHA256',
      { ops: { target: 'redis://ops.local:6379/0', stream: 'streamgate:ops' }, operatorCredentialSha256: null },
    ],
    ['AUTH_OPS_REDIS_URL', { ops: null, operatorCredentialSha256: sha256Hex(CREDENTIAL) }],
  ] as const)('answers PRECONDITION_FAILED naming %s when it is unset, even to the right credential', async (variable, options) => {
    const off = await serve(options);
    try {
      const refused = await codeOf(clientFor(off.base, `Bearer ${CREDENTIAL}`).ops.token.query());
      expect(refused.code).toBe('PRECONDITION_FAILED');
      expect(refused.message).toContain(variable);
      expect(off.counted).toEqual(['requested ops.token', 'denied ops.token']);
    } finally {
      await off.server.close();
    }
  });
});
