import { z } from 'zod';

export interface AppEnv {
  /** Relay WebSocket URLs, in the order the client tries them. */
  relayUrls: string[];
}

export type AppEnvResult = { ok: true; env: AppEnv } | { ok: false; problems: string };

const relayUrls = z
  .string({ error: 'VITE_RELAY_URLS is not set: give the relay URLs `npm run fleet` prints, comma-separated' })
  .transform((value) =>
    value
      .split(',')
      .map((url) => url.trim())
      .filter((url) => url !== ''),
  )
  .pipe(
    z
      .array(z.url({ protocol: /^wss?$/, error: 'each relay URL must be ws:// or wss://, e.g. ws://127.0.0.1:8081/v1/ws' }))
      .min(1, 'VITE_RELAY_URLS names no relay URL'),
  );

const appEnv = z.object({ VITE_RELAY_URLS: relayUrls });

/** Vite's `import.meta.env`, checked once at startup so a wrong setting shows on the page, not as a hang. */
export function parseAppEnv(env: Readonly<Record<string, unknown>>): AppEnvResult {
  const parsed = appEnv.safeParse(env);
  if (!parsed.success) return { ok: false, problems: z.prettifyError(parsed.error) };
  return { ok: true, env: { relayUrls: parsed.data.VITE_RELAY_URLS } };
}
