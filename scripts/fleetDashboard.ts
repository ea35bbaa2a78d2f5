export interface FleetDashboardOptions {
  port: number;
  host: string;
  config: { authUrl: string; relayUrl: string };
}

export interface FleetDashboard {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the operations dashboard (apps/dashboard's serveDashboard), or resolves null while
 * that app is not in this checkout: the fleet then runs without it and says so.
 */
export function startFleetDashboard(_options: FleetDashboardOptions): Promise<FleetDashboard | null> {
  return Promise.resolve(null);
}
