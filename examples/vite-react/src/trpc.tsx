import { createContext, useContext, useState } from 'react';
import type { ReactNode } from 'react';
import { QueryClientProvider } from '@tanstack/react-query';
import type { QueryClient } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import type { DemoRouter } from '@streamgate/auth';

// The only file that knows how the app talks to tRPC. Components call `useTRPC()` and pass
// `useTRPC().demo.token` to useSubscriptionRelay.

/** Same origin: the Vite server forwards /trpc to the auth service (see vite.config.ts). */
const TRPC_URL = '/trpc';

function createClient() {
  return createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: TRPC_URL })] });
}

type DemoTRPC = ReturnType<typeof createClient>;

const TRPCContext = createContext<DemoTRPC | null>(null);

export function TRPCProvider({ queryClient, children }: { queryClient: QueryClient; children?: ReactNode }): ReactNode {
  const [trpc] = useState(createClient);
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCContext.Provider value={trpc}>{children}</TRPCContext.Provider>
    </QueryClientProvider>
  );
}

export function useTRPC(): DemoTRPC {
  const trpc = useContext(TRPCContext);
  if (trpc === null) throw new Error('useTRPC: wrap the tree in <TRPCProvider>');
  return trpc;
}
