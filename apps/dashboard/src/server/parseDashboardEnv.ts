import { z } from 'zod';
import { envEnum, envInt, envText, parseEnv } from '@streamgate/boot';
import type { ConfigResult, Env } from '@streamgate/boot';
import { dashboardConfigSchema } from '../config/dashboardConfig.js';

export type DashboardEnv = {
  host: string;
  port: number;
  /** Served to the page as /config.json: the URLs the operator's browser reaches, not in-cluster names. */
  page: { authUrl: string; relayUrl: string };
  /** The built page to serve; undefined: dist/page beside main.js (DASHBOARD_PAGE_DIR of serveDashboard). */
  pageDir: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
};

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * What both URLs must not hold: they are served to every browser in /config.json and logged at
 * boot, so a user or password would be handed out; a query or fragment the page would drop.
 */
function extrasProblem(url: URL, example: string): string | null {
  if (url.username !== '' || url.password !== '')
    return `must not carry a user or password (every browser is served it); set it without them, e.g. ${example}`;
  if (url.search !== '' || url.hash !== '') return `must have no query or fragment; set it without them, e.g. ${example}`;
  return null;
}

const AUTH_EXAMPLE = 'https://auth.streamgate.example';
const RELAY_EXAMPLE = 'wss://relay.streamgate.example/v1/ws';

// The page's own schema decides, so whatever passes here the page and serveDashboard accept too.
const authUrlCheck = (raw: string): string | null => {
  if (!dashboardConfigSchema.shape.authUrl.safeParse(raw).success)
    return `must be an http:// or https:// URL; set it to the auth service as browsers reach it (the page calls its ops.token), e.g. ${AUTH_EXAMPLE}`;
  const url = new URL(raw);
  const extras = extrasProblem(url, AUTH_EXAMPLE);
  if (extras !== null) return extras;
  // The page calls <origin>/trpc/ops.token: a path here would be dropped without a word.
  if (url.pathname !== '/')
    return `must have no path (the page calls /trpc/ops.token on its origin); set it to the origin only, e.g. ${AUTH_EXAMPLE}`;
  return null;
};
const relayUrlCheck = (raw: string): string | null => {
  if (!dashboardConfigSchema.shape.relayUrl.safeParse(raw).success)
    return `must be a ws:// or wss:// URL; set it to a relay (or the load balancer in front of them) as browsers reach it, e.g. ${RELAY_EXAMPLE}`;
  const url = new URL(raw);
  const extras = extrasProblem(url, RELAY_EXAMPLE);
  if (extras !== null) return extras;
  // The relay upgrades on /v1/ws only: any other path is a 404 at every connect.
  if (!url.pathname.endsWith('/v1/ws')) return `must end in /v1/ws, the relay's WebSocket path; e.g. ${RELAY_EXAMPLE}`;
  return null;
};

/** Every variable the dashboard server reads, parsed once at boot. */
export const dashboardEnvSchema = z
  .object({
    DASHBOARD_HOST: envText({ fallback: '0.0.0.0' }),
    DASHBOARD_PORT: envInt({ fallback: 8084, min: 0, max: 65_535, meaning: '0 = any free port', fix: 'set it to a port number' }),
    DASHBOARD_AUTH_URL: envText({
      required: 'set it to the auth service as browsers reach it (the page calls its ops.token), e.g. https://auth.streamgate.example',
      check: authUrlCheck,
    }),
    DASHBOARD_RELAY_URL: envText({
      required: 'set it to a relay (or the load balancer in front of them) as browsers reach it, e.g. wss://relay.streamgate.example/v1/ws',
      check: relayUrlCheck,
    }),
    DASHBOARD_PAGE_DIR: envText({ optional: 'for the page built into the image (dist/page beside dist/main.js)' }),
    LOG_LEVEL: envEnum(LOG_LEVELS, { fallback: 'info' }),
  })
  .transform((e): DashboardEnv => ({
    host: e.DASHBOARD_HOST,
    port: e.DASHBOARD_PORT,
    page: { authUrl: e.DASHBOARD_AUTH_URL, relayUrl: e.DASHBOARD_RELAY_URL },
    pageDir: e.DASHBOARD_PAGE_DIR,
    logLevel: e.LOG_LEVEL,
  }));

export function parseDashboardEnv(env: Env): ConfigResult<DashboardEnv> {
  return parseEnv(dashboardEnvSchema, env, { app: 'dashboard' });
}
