import { createTRPCClient, httpLink, TRPCClientError } from '@trpc/client';
import type { OpsRouter } from '@streamgate/auth';

/** The vanilla tRPC procedure useSubscriptionRelay takes; its output carries the snapshot type. */
export type OpsTokenProcedure = Pick<ReturnType<typeof createTRPCClient<OpsRouter>>['ops']['token'], 'query'>;

/**
 * `ops.token` on the auth service, typed end to end by the auth app's router, with the operator
 * credential as a bearer token. A refusal (UNAUTHORIZED) is told to `onRefused` before the hook
 * sees the error, so the page asks for another credential instead of retrying one that will
 * never work.
 */
export function createOpsTokenProcedure(authUrl: string, credential: string, onRefused: (message: string) => void): OpsTokenProcedure {
  const client = createTRPCClient<OpsRouter>({
    links: [httpLink({ url: new URL('/trpc', authUrl).href, headers: () => ({ authorization: `Bearer ${credential}` }) })],
  });
  const token = client.ops.token;
  return {
    query: async (input, opts) => {
      try {
        return await token.query(input, opts);
      } catch (error) {
        if (error instanceof TRPCClientError && (error as TRPCClientError<OpsRouter>).data?.code === 'UNAUTHORIZED')
          onRefused(`The auth service refused the credential: ${error.message}`);
        throw error;
      }
    },
  };
}
