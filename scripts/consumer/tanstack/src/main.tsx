import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { createRoot } from 'react-dom/client';
import { RelayClient } from '@streamgate/client';
import { RelayProvider } from '@streamgate/react/tanstack';
import type { AppRouter } from './router.js';
import { Ticker } from './Ticker.js';
import { TRPCProvider } from './trpc.js';

const queryClient = new QueryClient();
const trpcClient = createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: 'http://localhost:3000/trpc' })] });
const relay = new RelayClient({ urls: ['ws://localhost:8080/v1/ws'] });

const root = document.getElementById('root');
if (root === null) throw new Error('no #root element');
createRoot(root).render(
  <QueryClientProvider client={queryClient}>
    <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
      <RelayProvider client={relay}>
        <Ticker stream="ticks" />
      </RelayProvider>
    </TRPCProvider>
  </QueryClientProvider>,
);
