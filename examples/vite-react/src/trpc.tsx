import { useState } from 'react';
import type { ReactNode } from 'react';
import { QueryClientProvider } from '@tanstack/react-query';
import type { QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { DemoRouter } from '@streamgate/auth';

// The only file that knows how the app talks to tRPC: @trpc/tanstack-react-query's context.
// Components call `useTRPC()` and pass `useTRPC().demo.token` to useSubscriptionRelay.

/** Same origin: the Vite server forwards /trpc to the auth service (see vite.config.ts). */
const TRPC_URL = '/trpc';

const trpcContext = createTRPCContext<DemoRouter>();

export const useTRPC = trpcContext.useTRPC;

export function TRPCProvider({ queryClient, children }: { queryClient: QueryClient; children?: ReactNode }): ReactNode {
  const [trpcClient] = useState(() => createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: TRPC_URL })] }));
  return (
    <QueryClientProvider client={queryClient}>
      <trpcContext.TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </trpcContext.TRPCProvider>
    </QueryClientProvider>
  );
}
