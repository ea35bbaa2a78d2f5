import { initTRPC, TRPCError } from '@trpc/server';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { defineStream, relayClaimsSchema } from '@streamgate/protocol';
import type { InferRelayPayload, RelaySubscription } from '@streamgate/protocol';
import { createTokenIssuer } from './createTokenIssuer.js';
import { generateSigningKey } from './generateSigningKey.js';
import { jwksDocument } from './jwksDocument.js';
import { relayTokenProcedure } from './relayTokenProcedure.js';
import type { RelayTokenObserver } from './relayTokenProcedure.js';
import { SigningKeySet } from './SigningKeySet.js';

type Payload = { step: number; label: string };
const runs = defineStream<Payload>('runs');
type Ctx = { userId: string | null };

async function setup(observer?: RelayTokenObserver) {
  const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k')]);
  if (!loaded.ok) throw new Error(loaded.error.message);
  const keys = loaded.keys;
  const issuer = createTokenIssuer({ keys, issuer: 'auth', audience: 'relay', redis: 'redis://r:6379' });
  const t = initTRPC.context<Ctx>().create();
  const authed = t.procedure.use(({ ctx, next }) => {
    if (ctx.userId === null) throw new TRPCError({ code: 'UNAUTHORIZED' });
    return next({ ctx: { userId: ctx.userId } });
  });
  const router = t.router({
    run: t.router({
      token: relayTokenProcedure(authed, {
        input: z.object({ runId: z.string() }),
        // ctx here has the middleware's narrowed type: userId is a string.
        authorize: (ctx, input) =>
          Promise.resolve(input.runId.startsWith(ctx.userId) ? { subject: ctx.userId } : { denied: 'not your run' }),
        stream: (input) => runs.for(input.runId),
        issuer,
        ...(observer === undefined ? {} : { observer }),
      }),
    }),
  });
  return { keys, router, caller: (userId: string | null) => t.createCallerFactory(router)({ userId }) };
}

describe('relayTokenProcedure', () => {
  it('authorizes, then returns a RelaySubscription whose token verifies', async () => {
    const events: string[] = [];
    const { keys, caller } = await setup({
      requested: (e) => events.push(`requested ${e.path}`),
      issued: (e) => events.push(`issued ${e.path} ${e.stream} ${e.subject}`),
      denied: (e) => events.push(`denied ${e.path} ${e.reason}`),
    });
    const sub = await caller('alice').run.token({ runId: 'alice-1' });
    expect(sub.stream).toBe('runs:alice-1');
    const { payload } = await jwtVerify(sub.token, createLocalJWKSet(jwksDocument(keys)), { issuer: 'auth', audience: 'relay' });
    expect(relayClaimsSchema.parse(payload)).toMatchObject({ sub: 'alice', stream: 'runs:alice-1' });

    await expect(caller('bob').run.token({ runId: 'alice-1' })).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: 'not your run',
    });
    expect(events).toEqual([
      'requested run.token',
      'issued run.token runs:alice-1 alice',
      'requested run.token',
      'denied run.token not your run',
    ]);
  });

  it('keeps the product middlewares in front of it', async () => {
    const { caller } = await setup();
    await expect(caller(null).run.token({ runId: 'x' })).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('turns a stream name the input makes invalid into BAD_REQUEST', async () => {
    const { caller } = await setup();
    await expect(caller('alice').run.token({ runId: 'alice bad name' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('lets the procedure choose the Redis per stream, over the issuer’s default', async () => {
    const loaded = await SigningKeySet.fromJwks([await generateSigningKey('ES256', 'k')]);
    if (!loaded.ok) throw new Error(loaded.error.message);
    const issuer = createTokenIssuer({ keys: loaded.keys, issuer: 'auth', audience: 'relay', redis: 'redis://default:6379' });
    const t = initTRPC.create();
    const router = t.router({
      token: relayTokenProcedure(t.procedure, {
        input: z.object({ tenant: z.string() }),
        authorize: () => Promise.resolve({ subject: 'u' }),
        stream: (input) => runs.for(input.tenant),
        issuer,
        redis: (stream) => `redis://${stream.replace('runs:', '')}.tenants:6379/0`,
      }),
    });
    const sub = await t.createCallerFactory(router)({}).token({ tenant: 'acme' });
    const { payload } = await jwtVerify(sub.token, createLocalJWKSet(jwksDocument(loaded.keys)), { issuer: 'auth', audience: 'relay' });
    expect(relayClaimsSchema.parse(payload).redis).toBe('redis://acme.tenants:6379/0');
    expect(() =>
      relayTokenProcedure(t.procedure, {
        input: z.object({}),
        authorize: () => Promise.resolve({ subject: 'u' }),
        stream: () => runs,
        issuer,
        redis: ['nope'],
      }),
    ).toThrow(/redis\[0\] must be/);
  });

  it('carries the payload type to the router output type', () => {
    type Router = Awaited<ReturnType<typeof setup>>['router'];
    type Outputs = inferRouterOutputs<Router>;
    type Inputs = inferRouterInputs<Router>;
    expectTypeOf<Outputs['run']['token']>().toEqualTypeOf<RelaySubscription<Payload>>();
    expectTypeOf<InferRelayPayload<Outputs['run']['token']>>().toEqualTypeOf<Payload>();
    expectTypeOf<Inputs['run']['token']>().toEqualTypeOf<{ runId: string }>();
  });
});
