import { spawnRelay, waitFor } from '@streamgate/testkit';
import type { RelayProcess } from '@streamgate/testkit';

export interface FileKeyRelayOptions {
  readonly name: string;
  readonly issuer: string;
  readonly audience: string;
  readonly redisAllowlist: string;
  /** A JWKS file (jwksDocument) the relay reads its keys from: no auth process is started. */
  readonly jwksFile: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** A relay process that trusts the keys in a JWKS file, once it answers /readyz with 200. */
export async function spawnFileKeyRelay(options: FileKeyRelayOptions): Promise<RelayProcess> {
  const relay = await spawnRelay({
    name: options.name,
    authUrl: 'http://127.0.0.1:1',
    issuer: options.issuer,
    audience: options.audience,
    redisAllowlist: options.redisAllowlist,
    env: {
      // Blank is unset: the keys come from the file instead.
      RELAY_JWKS_URL: '',
      RELAY_JWKS_FILE: options.jwksFile,
      RELAY_DRAIN_WINDOW_MS: '500',
      ...options.env,
    },
  });
  await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, {
    timeoutMs: 20_000,
    message: `${options.name} never ready`,
  });
  return relay;
}
