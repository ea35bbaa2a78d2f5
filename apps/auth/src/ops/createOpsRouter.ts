import { initTRPC, TRPCError } from '@trpc/server';
import { z } from 'zod';
import { OPS_STREAM_DEFAULT, opsSnapshotSchema } from '@streamgate/ops';
import { defineStream } from '@streamgate/protocol';
import { relayTokenProcedure } from '@streamgate/server';
import type { RelayTokenObserver, TokenIssuer } from '@streamgate/server';
import { checkOperatorCredential } from './operatorCredential.js';

/** What the ops procedures read of a request: its Authorization header (createOpsContext). */
export type OpsContext = { authorization?: string | undefined };

/** Builds OpsContext from the HTTP request; pass it as the tRPC handler's createContext. */
export function createOpsContext({ req }: { req: { headers: { authorization?: string | undefined } } }): OpsContext {
  return { authorization: req.headers.authorization };
}

export type OpsRouterOptions = {
  issuer: TokenIssuer;
  /** The operations stream ops.token opens; null (AUTH_OPS_REDIS_URL unset): ops.token is off. */
  ops: { target: string; stream: string } | null;
  /** Hex sha256 of the operator credential; null (AUTH_OPERATOR_CREDENTIAL_SHA256 unset): ops.token is off. */
  operatorCredentialSha256: string | null;
  observer?: RelayTokenObserver;
  exposeStackTraces?: boolean;
  /** Told of each refused operator request (no credential, a wrong one), for the audit log. */
  onRefused?: (code: 'credential_missing' | 'credential_wrong') => void;
};

/** The subject of every ops token: relays log it, and the stream is the same for every operator. */
export const OPS_TOKEN_SUBJECT = 'operator';

/**
 * `ops.token`: a relay token for the operations stream, for whoever sends the operator
 * credential as `Authorization: Bearer <credential>`; UNAUTHORIZED for anyone else. With the
 * credential hash or the ops Redis unset it answers PRECONDITION_FAILED naming the variable:
 * the procedure is always in the router so that the dashboard's client type does not depend
 * on configuration. It never shares anything with the demo router's open door.
 */
export function createOpsRouter({
  issuer,
  ops,
  operatorCredentialSha256,
  observer,
  exposeStackTraces = false,
  onRefused,
}: OpsRouterOptions) {
  const t = initTRPC.context<OpsContext>().create({ isDev: exposeStackTraces });
  // A refused call is a request and a denial in the token metrics, as a refused demo.token is:
  // the procedure's own observer runs only for calls this middleware lets through.
  const refuse = (path: string, code: 'PRECONDITION_FAILED' | 'UNAUTHORIZED', message: string): never => {
    observer?.requested?.({ path });
    observer?.denied?.({ path, reason: message });
    throw new TRPCError({ code, message });
  };
  const operatorOnly = t.procedure.use(({ ctx, next, path }) => {
    if (operatorCredentialSha256 === null || ops === null) {
      const missing = operatorCredentialSha256 === null ? 'AUTH_OPERATOR_CREDENTIAL_SHA256' : 'AUTH_OPS_REDIS_URL';
      return refuse(path, 'PRECONDITION_FAILED', `ops.token is off on this auth service: set ${missing}`);
    }
    const refusal = checkOperatorCredential(ctx.authorization, operatorCredentialSha256);
    if (refusal !== null) {
      onRefused?.(refusal.code);
      return refuse(path, 'UNAUTHORIZED', refusal.message);
    }
    return next();
  });
  const opsStream = defineStream(ops?.stream ?? OPS_STREAM_DEFAULT, opsSnapshotSchema);
  return t.router({
    ops: t.router({
      token: relayTokenProcedure(operatorOnly, {
        input: z.void(),
        authorize: () => Promise.resolve({ subject: OPS_TOKEN_SUBJECT }),
        stream: () => opsStream,
        issuer,
        ...(ops === null ? {} : { redis: ops.target }),
        ...(observer === undefined ? {} : { observer }),
      }),
    }),
  });
}

/** The router type the operations dashboard's tRPC client is typed with. */
export type OpsRouter = ReturnType<typeof createOpsRouter>;
