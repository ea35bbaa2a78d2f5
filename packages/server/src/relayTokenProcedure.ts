import type { StandardSchemaV1 } from '@standard-schema/spec';
import { TRPCError } from '@trpc/server';
import type { inferProcedureBuilderResolverOptions, TRPCProcedureBuilder, TRPCQueryProcedure, TRPCUnsetMarker } from '@trpc/server';
import { z } from 'zod';
import type { RelaySubscription, StreamRef } from '@streamgate/protocol';
import type { RedisTargetChoice, TokenIssuer } from './createTokenIssuer.js';
import { ttl } from './createTokenIssuer.js';
import { redisTargetChooser } from './redisTargetChooser.js';

/** What a product's authorization decides: who the token is for, or why not. */
export type RelayAuthorization = { subject: string } | { denied: string };

/** Hooks for metrics and audit logs; `path` is the procedure's tRPC path. */
export type RelayTokenObserver = {
  requested?(event: { path: string }): void;
  issued?(event: { path: string; stream: string; subject: string }): void;
  denied?(event: { path: string; reason: string }): void;
};

/** A procedure builder with no input yet: `t.procedure` or one with the product's middlewares. */
export type BaseProcedureBuilder<TContext, TMeta, TContextOverrides> = TRPCProcedureBuilder<
  TContext,
  TMeta,
  TContextOverrides,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  TRPCUnsetMarker,
  false
>;

/**
 * What `relayTokenProcedure` takes. `TSchema` is the input schema: any Standard Schema (zod
 * 3.24+, zod 4, valibot, arktype, …), as tRPC's own `.input()` takes; the procedure's input type
 * is the schema's input, and `authorize` and `stream` get its output.
 */
export type RelayTokenProcedureOptions<TCtx, TSchema extends StandardSchemaV1, T> = {
  /** Validates the request. */
  input: TSchema;
  /** Runs the product's authorization: the one place it runs, however often clients reconnect. */
  authorize: (ctx: TCtx, input: StandardSchemaV1.InferOutput<TSchema>) => Promise<RelayAuthorization>;
  /** The stream the token opens, typically `definition.for(input.id)`; it fixes the payload type. */
  stream: (input: StandardSchemaV1.InferOutput<TSchema>, ctx: TCtx) => StreamRef<T>;
  issuer: TokenIssuer;
  /** Per-procedure overrides of the issuer's defaults. */
  ttlSeconds?: number;
  /**
   * The Redis this procedure's tokens name, instead of the issuer's choice: a target, a list of
   * instances to place each stream on (placeStream), or `(stream) => target`, the product's own
   * choice per stream. The stream must be written there (see docs/protocol.md §16).
   */
  redis?: RedisTargetChoice;
  observer?: RelayTokenObserver;
};

export type RelayTokenProcedure<TInputIn, TMeta, T> = TRPCQueryProcedure<{
  input: TInputIn;
  output: RelaySubscription<T>;
  meta: TMeta;
}>;

/**
 * The builder after `.input(schema)`, as it is at every concrete call site. tRPC computes these
 * types through conditionals over the parser type, which TypeScript cannot reduce while the
 * schema is a type parameter; this names the reduced shape (the type-level test pins it).
 */
type InputBuilder<TCtx, TInput, TInputIn, TMeta, T> = {
  query(
    resolver: (opts: { ctx: TCtx; input: TInput; path: string }) => Promise<RelaySubscription<T>>,
  ): RelayTokenProcedure<TInputIn, TMeta, T>;
};

/**
 * A query procedure that authorizes, then mints a relay token. Its output type is
 * `RelaySubscription<T>`, so the client learns the stream's payload type from the router type.
 * A denial becomes FORBIDDEN with the product's reason as message.
 */
export function relayTokenProcedure<TContext, TMeta, TContextOverrides, TSchema extends StandardSchemaV1, T>(
  procedure: BaseProcedureBuilder<TContext, TMeta, TContextOverrides>,
  options: RelayTokenProcedureOptions<
    inferProcedureBuilderResolverOptions<BaseProcedureBuilder<TContext, TMeta, TContextOverrides>>['ctx'],
    TSchema,
    T
  >,
): RelayTokenProcedure<StandardSchemaV1.InferInput<TSchema>, TMeta, T> {
  type Ctx = inferProcedureBuilderResolverOptions<BaseProcedureBuilder<TContext, TMeta, TContextOverrides>>['ctx'];
  const { authorize, stream, issuer, observer } = options;
  // Checked once, here: a bad target or lifetime is the backend's mistake, found when the router
  // is built rather than as an INTERNAL_SERVER_ERROR on every call.
  if (options.ttlSeconds !== undefined) ttl(options.ttlSeconds, 'ttlSeconds');
  const chooseRedis = options.redis === undefined ? undefined : redisTargetChooser(options.redis, 'redis');
  type Input = StandardSchemaV1.InferOutput<TSchema>;
  const builder = procedure.input(options.input) as unknown as InputBuilder<Ctx, Input, StandardSchemaV1.InferInput<TSchema>, TMeta, T>;
  return builder.query(async ({ ctx, input, path }) => {
    observer?.requested?.({ path });
    const decision = await authorize(ctx, input);
    if ('denied' in decision) {
      observer?.denied?.({ path, reason: decision.denied });
      throw new TRPCError({ code: 'FORBIDDEN', message: decision.denied });
    }
    let ref: StreamRef<T>;
    try {
      ref = stream(input, ctx);
    } catch (error) {
      // A stream name built from input that is not a valid key is the caller's mistake, not ours.
      // Stream names are checked with zod/mini inside @streamgate/protocol (whatever schema
      // library the product uses); `$ZodError` is the base of classic and mini zod errors, and
      // zod's instanceof holds across copies of zod 4.
      if (error instanceof z.core.$ZodError) {
        throw new TRPCError({ code: 'BAD_REQUEST', message: `stream name: ${error.issues[0]?.message ?? 'invalid'}` });
      }
      throw error;
    }
    const subscription = await issuer.issue(ref, {
      subject: decision.subject,
      ...(options.ttlSeconds === undefined ? {} : { ttlSeconds: options.ttlSeconds }),
      ...(chooseRedis === undefined ? {} : { redis: chooseRedis(ref.name) }),
    });
    observer?.issued?.({ path, stream: subscription.stream, subject: decision.subject });
    return subscription;
  });
}
