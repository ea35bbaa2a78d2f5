import { createContext, useContext } from 'react';
import type { ReactNode } from 'react';
import type { RelayClient } from '@streamgate/client';

const RelayContext = createContext<RelayClient | null>(null);

export interface RelayProviderProps {
  /** Created once by the app (one socket per tab); the provider neither creates nor closes it. */
  client: RelayClient;
  children?: ReactNode;
}

export function RelayProvider({ client, children }: RelayProviderProps): ReactNode {
  return <RelayContext.Provider value={client}>{children}</RelayContext.Provider>;
}

export function useRelayClient(): RelayClient {
  const client = useContext(RelayContext);
  if (client === null) throw new Error('useRelayClient: wrap the tree in <RelayProvider client={…}>');
  return client;
}
