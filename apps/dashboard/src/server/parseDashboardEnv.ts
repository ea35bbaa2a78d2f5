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

// The page's own schema decides, so whatever passes here the page and serveDashboard accept too.
const authUrlCheck = (raw: string): string | null => {
  if (!dashboardConfigSchema.shape.authUrl.safeParse(raw).success)
    return 'must be an http:// or https:// URL; set it to the auth service as browsers reach it (the page calls its ops.token), e.g. https://auth.streamgate.example';
  // The page calls <origin>/trpc/ops.token: a path here would be dropped without a word.
  if (new URL(raw).pathname !== '/')
    return 'must have no path (the page calls /trpc/ops.token on its origin); set it to the origin only, e.g. https://auth.streamgate.example';
  return null;
};
const relayUrlCheck = (raw: string): string | null =>
  dashboardConfigSchema.shape.relayUrl.safeParse(raw).success
    ? null
    : 'must be a ws:// or wss:// URL; set it to a relay (or the load balancer in front of them) as browsers reach it, e.g. wss://relay.streamgate.example/v1/ws';

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
