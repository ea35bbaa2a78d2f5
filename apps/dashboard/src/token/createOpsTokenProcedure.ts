import { createTRPCUntypedClient, httpLink, TRPCClientError } from '@trpc/client';
import type { OpsSnapshot } from '@streamgate/ops';
import type { RelaySubscription } from '@streamgate/protocol';

export interface OpsTokenProcedure {
  query(input: undefined): Promise<RelaySubscription<OpsSnapshot>>;
}

/**
 * `ops.token` on the auth service with the operator credential as a bearer token. A refusal
 * (UNAUTHORIZED) is told to `onRefused` before the hook sees the error, so the page can ask for
 * another credential instead of retrying one that will never work.
 */
export function createOpsTokenProcedure(authUrl: string, credential: string, onRefused: (message: string) => void): OpsTokenProcedure {
  const client = createTRPCUntypedClient({
    links: [httpLink({ url: new URL('/trpc', authUrl).href, headers: () => ({ authorization: `Bearer ${credential}` }) })],
  });
  return {
    query: async (input) => {
      try {
        return (await client.query('ops.token', input)) as RelaySubscription<OpsSnapshot>;
      } catch (error) {
        if (error instanceof TRPCClientError && (error.data as { code?: unknown } | undefined)?.code === 'UNAUTHORIZED')
          onRefused(`The auth service refused the credential: ${error.message}`);
        throw error;
      }
    },
  };
}
