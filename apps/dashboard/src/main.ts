import type { Logger } from 'pino';
import { appLogger, bootApp, configError, exitOnConfigError } from '@streamgate/boot';
import type { DashboardEnv } from './server/parseDashboardEnv.js';
import { parseDashboardEnv } from './server/parseDashboardEnv.js';
import { DASHBOARD_PAGE_DIR, DashboardPageMissingError, serveDashboard } from './server/serveDashboard.js';
import type { DashboardServer } from './server/serveDashboard.js';

/**
 * The production server: the page built into the image (never Vite at run time), /config.json
 * with the browser-facing URLs of auth and the relays, /healthz and /readyz.
 */
async function startDashboard(config: DashboardEnv, log: Logger): Promise<DashboardServer> {
  const pageDir = config.pageDir ?? DASHBOARD_PAGE_DIR;
  try {
    return await serveDashboard({
      host: config.host,
      port: config.port,
      config: config.page,
      prebuiltPage: pageDir,
      onError: (message, error) => log.error({ err: error }, message),
    });
  } catch (error) {
    if (!(error instanceof DashboardPageMissingError)) throw error;
    // Like a bad variable, a restart will not help until the image or DASHBOARD_PAGE_DIR changes.
    const shown = config.pageDir === undefined ? 'DASHBOARD_PAGE_DIR (unset)' : `DASHBOARD_PAGE_DIR=${JSON.stringify(config.pageDir)}`;
    return exitOnConfigError(
      log,
      configError('dashboard', [
        { variable: 'DASHBOARD_PAGE_DIR', message: `${shown}: ${error.message}, or set DASHBOARD_PAGE_DIR to a directory holding one` },
      ]),
    );
  }
}

// The dashboard holds nothing: the first SIGTERM/SIGINT closes it and it exits 0.
const {
  config,
  log,
  app: dashboard,
} = await bootApp({
  app: 'dashboard',
  bootLog: appLogger('dashboard'),
  parseConfig: () => parseDashboardEnv(process.env),
  log: (config) => appLogger('dashboard', config.logLevel),
  create: startDashboard,
  stop: { run: (dashboard) => dashboard.close() },
});
// Test harnesses read the port from this line; keep "msg":"listening" and a numeric "port".
log.info(
  { port: dashboard.port, host: config.host, pageDir: dashboard.pageDir, authUrl: config.page.authUrl, relayUrl: config.page.relayUrl },
  'listening',
);
