import { z } from 'zod';

/** `GET /config.json`, served next to the page by serveDashboard. */
export const dashboardConfigSchema = z.object({
  /** The auth service whose `ops.token` mints the operations-stream token. */
  authUrl: z.url({ protocol: /^https?$/, error: 'authUrl must be the http(s) URL of the auth service' }),
  /** Any relay's WebSocket URL; the client reconnects to it after a drain or a cut. */
  relayUrl: z.url({ protocol: /^wss?$/, error: 'relayUrl must be a ws(s) URL of a relay, e.g. ws://127.0.0.1:8081/v1/ws' }),
});

export type DashboardConfig = z.infer<typeof dashboardConfigSchema>;

export type DashboardConfigResult = { ok: true; config: DashboardConfig } | { ok: false; problem: string };

/** Parses a config.json body; a wrong one is shown on the page, never thrown. */
export function parseDashboardConfig(body: unknown): DashboardConfigResult {
  const parsed = dashboardConfigSchema.safeParse(body);
  return parsed.success ? { ok: true, config: parsed.data } : { ok: false, problem: z.prettifyError(parsed.error) };
}
