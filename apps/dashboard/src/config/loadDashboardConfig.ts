import { parseDashboardConfig } from './dashboardConfig.js';
import type { DashboardConfigResult } from './dashboardConfig.js';

/** The page's runtime config from the server that serves it (relative, so the page works under any path). */
export async function loadDashboardConfig(): Promise<DashboardConfigResult> {
  let response: Response;
  try {
    response = await fetch('config.json', { cache: 'no-store' });
  } catch (error) {
    return { ok: false, problem: `config.json could not be fetched: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (!response.ok) return { ok: false, problem: `config.json answered HTTP ${response.status}` };
  try {
    return parseDashboardConfig(await response.json());
  } catch (error) {
    return { ok: false, problem: `config.json is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
