import { useEffect, useMemo, useState } from 'react';
import { CredentialForm } from './components/CredentialForm.js';
import { FleetView } from './components/FleetView.js';
import { OpsFeed } from './components/OpsFeed.js';
import type { DashboardConfig } from './config/dashboardConfig.js';
import { FleetStore } from './model/FleetStore.js';
import { createOpsTokenProcedure } from './token/createOpsTokenProcedure.js';

export function App({ config, initialCredential }: { config: DashboardConfig; initialCredential: string | undefined }) {
  const [credential, setCredential] = useState(initialCredential);
  const [refused, setRefused] = useState<string | undefined>(undefined);
  const [store] = useState(() => new FleetStore());
  useEffect(() => () => store.close(), [store]);
  const procedure = useMemo(
    () =>
      createOpsTokenProcedure(config.authUrl, credential ?? '', (message) => {
        setRefused(message);
        setCredential(undefined);
      }),
    [config.authUrl, credential],
  );
  return (
    <main>
      <header className="top">
        <h1>streamgate operations</h1>
        <OpsFeed procedure={procedure} store={store} enabled={credential !== undefined} />
      </header>
      {credential === undefined ? (
        <CredentialForm
          refused={refused}
          onCredential={(value) => {
            setRefused(undefined);
            setCredential(value);
          }}
        />
      ) : null}
      <FleetView store={store} />
    </main>
  );
}
