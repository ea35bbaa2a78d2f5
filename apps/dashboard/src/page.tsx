import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { RelayClient } from '@streamgate/client';
import { RelayProvider } from '@streamgate/react';
import { App } from './App.js';
import { loadDashboardConfig } from './config/loadDashboardConfig.js';
import { credentialFromFragment } from './token/credentialFromFragment.js';

const rootElement = document.getElementById('root');
if (rootElement === null) throw new Error('index.html has no #root element');
const root = createRoot(rootElement);

const loaded = await loadDashboardConfig();
if (loaded.ok) {
  // One client, so one WebSocket, for the tab: it resumes on whichever relay it reaches.
  const relayClient = new RelayClient({ urls: [loaded.config.relayUrl] });
  root.render(
    <StrictMode>
      <RelayProvider client={relayClient}>
        <App config={loaded.config} initialCredential={credentialFromFragment(window.location.hash)} />
      </RelayProvider>
    </StrictMode>,
  );
} else {
  root.render(
    <pre className="problem" data-testid="config-problem">
      The dashboard is not configured: {loaded.problem}
    </pre>,
  );
}
