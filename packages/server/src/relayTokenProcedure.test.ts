import type { StandardSchemaV1 } from '@standard-schema/spec';
import { initTRPC, TRPCError } from '@trpc/server';
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import { type } from 'arktype';
import { createLocalJWKSet, jwtVerify } from 'jose';
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { defineStream, relayClaimsSchema } from '@streamgate/protocol';
import type { InferRelayPayload, RelaySubscription } from '@streamgate/protocol';
import { createTokenIssuer } from './createTokenIssuer.js';
import type { TokenIssuer } from './createTokenIssuer.js';
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

  it('refuses a token lifetime out of range when the router is built, not on every call', async () => {
    const { keys } = await setup();
    const issuer = createTokenIssuer({ keys, issuer: 'auth', audience: 'relay', redis: 'redis://r:6379' });
    const t = initTRPC.context<Ctx>().create();
    const define = (ttlSeconds: number) => () =>
      relayTokenProcedure(t.procedure, {
        input: z.object({ runId: z.string() }),
        authorize: () => Promise.resolve({ subject: 'a' }),
        stream: (input) => runs.for(input.runId),
        issuer,
        ttlSeconds,
      });
    for (const bad of [0, 100_000, Number.NaN]) expect(define(bad)).toThrow(RangeError);
    expect(define(60)).not.toThrow();
    // And an issuer without a key set is refused when made, not at each token.
    expect(() =>
      createTokenIssuer({ keys: undefined as unknown as typeof keys, issuer: 'auth', audience: 'relay', redis: 'redis://r:6379' }),
    ).toThrow(/keys must be a SigningKeySet/);
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

// Each library's schema for `{ runId: string, limit?: number }`, where the input type (what the
// client sends) and the output type (what authorize and stream get) differ: `limit` defaults to 10.
const schemas = {
  'zod 4': z.object({ runId: z.string().min(3), limit: z.number().int().default(10) }),
  'zod 3 API (zod/v3)': z3.object({ runId: z3.string().min(3), limit: z3.number().int().default(10) }),
  valibot: v.object({ runId: v.pipe(v.string(), v.minLength(3)), limit: v.optional(v.pipe(v.number(), v.integer()), 10) }),
  arktype: type({ runId: 'string >= 3', 'limit?': 'number.integer' }).pipe((input) => ({ runId: input.runId, limit: input.limit ?? 10 })),
} satisfies Record<string, StandardSchemaV1<{ runId: string; limit?: number }, { runId: string; limit: number }>>;

describe.each(Object.entries(schemas))('relayTokenProcedure with a %s input schema', (_library, schema) => {
  async function build() {
    const loaded = await SigningKeySet.fromJwks([await generateSigningKey('EdDSA', 'k')]);
    if (!loaded.ok) throw new Error(loaded.error.message);
    const issuer = createTokenIssuer({ keys: loaded.keys, issuer: 'auth', audience: 'relay', redis: 'redis://r:6379' });
    const t = initTRPC.context<{ user: string }>().create();
    const seen: Array<{ runId: string; limit: number }> = [];
    const router = t.router({
      token: relayTokenProcedure(t.procedure, {
        input: schema,
        authorize: (ctx, input) => {
          seen.push(input);
          return Promise.resolve({ subject: ctx.user });
        },
        stream: (input) => runs.for(input.runId),
        issuer,
      }),
    });
    return { keys: loaded.keys, router, seen, caller: t.createCallerFactory(router)({ user: 'alice' }) };
  }

  it('validates with the schema, passes its output on and mints the documented claims', async () => {
    const { keys, seen, caller } = await build();
    const sub = await caller.token({ runId: 'run-1' });
    expect(seen).toEqual([{ runId: 'run-1', limit: 10 }]);
    const { payload } = await jwtVerify(sub.token, createLocalJWKSet(jwksDocument(keys)), { issuer: 'auth', audience: 'relay' });
    expect(relayClaimsSchema.parse(payload)).toMatchObject({ sub: 'alice', stream: 'runs:run-1', redis: 'redis://r:6379/0', ver: 1 });
    await expect(caller.token({ runId: 'ab' })).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    // @ts-expect-error runId is required by the schema's input type
    await expect(caller.token({})).rejects.toMatchObject({ code: 'BAD_REQUEST' });
    await expect(caller.token({ runId: 'run bad' })).rejects.toMatchObject({ code: 'BAD_REQUEST', message: /^stream name: / });
    expect(seen).toHaveLength(2);
  });
});

describe('relayTokenProcedure types, per schema library', () => {
  // One procedure per library, each a concrete call as in a product's router: the types come
  // from the schema's own Standard Schema declaration, not from a union of them.
  const routerOf = (issuer: TokenIssuer) => {
    const t = initTRPC.create();
    const authorize = (_ctx: object, input: { runId: string; limit: number }) => Promise.resolve({ subject: input.runId });
    return t.router({
      zod4: relayTokenProcedure(t.procedure, { input: schemas['zod 4'], authorize, stream: (input) => runs.for(input.runId), issuer }),
      zod3: relayTokenProcedure(t.procedure, {
        input: schemas['zod 3 API (zod/v3)'],
        authorize,
        stream: (input) => runs.for(input.runId),
        issuer,
      }),
      valibot: relayTokenProcedure(t.procedure, { input: schemas.valibot, authorize, stream: (input) => runs.for(input.runId), issuer }),
      arktype: relayTokenProcedure(t.procedure, { input: schemas.arktype, authorize, stream: (input) => runs.for(input.runId), issuer }),
    });
  };
  type Inputs = inferRouterInputs<ReturnType<typeof routerOf>>;
  type Outputs = inferRouterOutputs<ReturnType<typeof routerOf>>;

  it("takes the procedure's input type from the schema's input", () => {
    // Building it runs no schema and signs nothing: the issuer is not called until a request.
    expect(Object.keys(routerOf({} as TokenIssuer)._def.procedures).sort()).toEqual(['arktype', 'valibot', 'zod3', 'zod4']);
    expectTypeOf<Inputs['zod4']>().toEqualTypeOf<{ runId: string; limit?: number | undefined }>();
    expectTypeOf<Inputs['zod3']>().toEqualTypeOf<{ runId: string; limit?: number | undefined }>();
    expectTypeOf<Inputs['valibot']>().toEqualTypeOf<{ runId: string; limit?: number | undefined }>();
    expectTypeOf<Inputs['arktype']>().toEqualTypeOf<{ runId: string; limit?: number }>();
  });

  it('gives authorize and stream the schema output, and the router the stream payload', () => {
    expectTypeOf<Outputs['zod4']>().toEqualTypeOf<RelaySubscription<Payload>>();
    expectTypeOf<Outputs['zod3']>().toEqualTypeOf<RelaySubscription<Payload>>();
    expectTypeOf<Outputs['valibot']>().toEqualTypeOf<RelaySubscription<Payload>>();
    expectTypeOf<Outputs['arktype']>().toEqualTypeOf<RelaySubscription<Payload>>();
    expectTypeOf<InferRelayPayload<Outputs['valibot']>>().toEqualTypeOf<Payload>();
    const t = initTRPC.create();
    const issuer = {} as TokenIssuer;
    // Never called: the lines that must not typecheck if the output type were lost.
    const wrong = () => [
      relayTokenProcedure(t.procedure, {
        input: schemas.valibot,
        authorize: () => Promise.resolve({ subject: 'u' }),
        // @ts-expect-error the schema's output has no `orderId`
        stream: (input: { orderId: string }) => runs.for(input.orderId),
        issuer,
      }),
      relayTokenProcedure(t.procedure, {
        input: schemas.arktype,
        // @ts-expect-error `limit` is a number after the schema, not a string
        authorize: (_ctx, input: { runId: string; limit: string }) => Promise.resolve({ subject: input.limit }),
        stream: (input) => runs.for(input.runId),
        issuer,
      }),
    ];
    expect(typeof wrong).toBe('function');
  });
});
