import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient } from '@tanstack/react-query';
import { RelayClient } from '@streamgate/client';
import { RelayProvider } from '@streamgate/react';
import { parseAppEnv } from './parseAppEnv.js';
import { Ticks } from './Ticks.js';
import { TRPCProvider } from './trpc.js';

const root = document.getElementById('root');
if (root === null) throw new Error('index.html has no #root element');

const parsed = parseAppEnv(import.meta.env);
if (parsed.ok) {
  // One client, so one WebSocket, for the whole tab; every subscription shares it.
  const relayClient = new RelayClient({ urls: parsed.env.relayUrls });
  const queryClient = new QueryClient();
  createRoot(root).render(
    <StrictMode>
      <TRPCProvider queryClient={queryClient}>
        <RelayProvider client={relayClient}>
          <Ticks />
        </RelayProvider>
      </TRPCProvider>
    </StrictMode>,
  );
} else {
  createRoot(root).render(
    <pre className="problem" data-testid="config-problem">
      The example is not configured (see examples/vite-react/README.md):{'\n'}
      {parsed.problems}
    </pre>,
  );
}
