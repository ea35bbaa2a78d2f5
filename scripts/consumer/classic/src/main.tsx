import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { httpBatchLink } from '@trpc/client';
import { createRoot } from 'react-dom/client';
import { RelayClient } from '@streamgate/client';
import { RelayProvider } from '@streamgate/react';
import { Ticker } from './Ticker.js';
import { trpc } from './trpc.js';

const queryClient = new QueryClient();
const trpcClient = trpc.createClient({ links: [httpBatchLink({ url: 'http://localhost:3000/trpc' })] });
const relay = new RelayClient({ urls: ['ws://localhost:8080/v1/ws'] });

const root = document.getElementById('root');
if (root === null) throw new Error('no #root element');
createRoot(root).render(
  <trpc.Provider client={trpcClient} queryClient={queryClient}>
    <QueryClientProvider client={queryClient}>
      <RelayProvider client={relay}>
        <Ticker stream="ticks" />
      </RelayProvider>
    </QueryClientProvider>
  </trpc.Provider>,
);
