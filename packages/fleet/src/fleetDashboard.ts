import { serveDashboard } from '@streamgate/dashboard/server';
import type { DashboardServer, ServeDashboardOptions } from '@streamgate/dashboard/server';

/**
 * Serves the operations dashboard for the fleet (built with Vite first when its dist/ is missing
 * or stale), and gives its URL with the operator credential in the fragment, which the browser
 * keeps to itself: the server that serves the page never sees it.
 */
export async function startFleetDashboard(
  options: ServeDashboardOptions,
  credential: string,
): Promise<DashboardServer & { signedInUrl: string }> {
  const server = await serveDashboard(options);
  const url = new URL(server.url);
  url.hash = `credential=${encodeURIComponent(credential)}`;
  return { ...server, signedInUrl: url.toString() };
}
