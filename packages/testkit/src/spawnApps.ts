import { resolve } from 'node:path';
import { appCommand, appNodeVersion, appRuntime } from './appRuntime.js';
import { builtAppPath } from './builtAppPath.js';
import { readListeningPort } from './readListeningPort.js';
import { repoRoot } from './repoRoot.js';
import { ServiceError, spawnService } from './spawnService.js';
import type { Service } from './spawnService.js';
import { spawnTsEntry } from './spawnTsEntry.js';

export interface AppProcess {
  readonly service: Service;
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly httpUrl: string;
}

export interface RelayProcess extends AppProcess {
  /** `ws://127.0.0.1:<port>/v1/ws` */
  readonly url: string;
}

/**
 * An app on loopback: waits for its `"msg":"listening"` log line and reads the port from it
 * (every app logs its port there; the kernel picks it when asked for port 0). It runs from the
 * run's bundle when STREAMGATE_APP_BUILD is set (the e2e global setup builds it once), else
 * from source through tsx.
 */
export async function spawnApp(
  entry: string,
  name: string,
  env: Readonly<Record<string, string>>,
  options: { relayUserland?: boolean } = {},
): Promise<AppProcess> {
  const ready = { name, env, readyPattern: /"msg":"listening"/, readyTimeoutMs: 30_000 };
  const { appBuild } = appRuntime();
  const built = appBuild === undefined ? undefined : builtAppPath(appBuild, resolve(repoRoot(), entry));
  const service =
    built === undefined
      ? await spawnTsEntry(entry, { ...ready, ...options })
      : await spawnService({
          ...ready,
          name,
          ...appCommand(['--enable-source-maps', built], { relay: options.relayUserland ?? false, cwd: process.cwd() }),
        });
  const port = await readListeningPort(service);
  return { service, port, httpUrl: `http://127.0.0.1:${port}` };
}

export interface AuthProcessOptions {
  readonly issuer: string;
  readonly audience: string;
  /** The Redis target tokens name. */
  readonly redisUrl: string;
  /** JSON array of private JWKs. */
  readonly signingKeys: string;
  readonly port?: number;
  readonly env?: Readonly<Record<string, string>>;
}

/** The auth service from source, on loopback, on the port the kernel picks unless told. */
export function spawnAuth(options: AuthProcessOptions): Promise<AppProcess> {
  return spawnApp('apps/auth/src/main.ts', 'auth', {
    AUTH_HOST: '127.0.0.1',
    AUTH_PORT: String(options.port ?? 0),
    AUTH_SIGNING_KEYS: options.signingKeys,
    AUTH_ISSUER: options.issuer,
    AUTH_AUDIENCE: options.audience,
    AUTH_REDIS_URL: options.redisUrl,
    LOG_LEVEL: 'info',
    ...options.env,
  });
}

export interface RelayProcessOptions {
  readonly name: string;
  readonly authUrl: string;
  readonly issuer: string;
  readonly audience: string;
  readonly redisAllowlist: string;
  readonly env?: Readonly<Record<string, string>>;
}

/** A relay pod from source, trusting the auth service's JWKS over HTTP. */
export async function spawnRelay(options: RelayProcessOptions): Promise<RelayProcess> {
  const app = await spawnApp(
    'apps/relay/src/main.ts',
    options.name,
    {
      RELAY_HOST: '127.0.0.1',
      RELAY_PORT: '0',
      RELAY_NODE_ID: options.name,
      RELAY_JWKS_URL: `${options.authUrl}/.well-known/jwks.json`,
      RELAY_TOKEN_AUDIENCE: options.audience,
      RELAY_TOKEN_ISSUER: options.issuer,
      RELAY_REDIS_ALLOWLIST: options.redisAllowlist,
      // The listening line is logged at info; tests and the fleet read the port from it.
      LOG_LEVEL: 'info',
      ...options.env,
    },
    { relayUserland: true },
  );
  const wrongRuntime = relayRuntimeProblem(app.service);
  if (wrongRuntime !== undefined) {
    await app.service.stop();
    throw new ServiceError(app.service.name, wrongRuntime, app.service.output());
  }
  return { ...app, url: `ws://127.0.0.1:${app.port}/v1/ws` };
}

/**
 * A run meant to test the relay on another Node (STREAMGATE_APP_NODE) must not pass on this one:
 * the relay's listening line names the Node and the native uWS binary it really runs on.
 */
function relayRuntimeProblem(service: Service): string | undefined {
  const line = service.lines.find((text) => text.includes('"msg":"listening"'));
  const record = line === undefined ? undefined : (JSON.parse(line) as { nodeVersion?: unknown; uws?: unknown });
  const expected = appNodeVersion();
  if (record?.nodeVersion !== expected || typeof record.uws !== 'string' || !record.uws.endsWith('.node')) {
    return `relay is not running natively on ${expected}: its listening line says nodeVersion ${String(record?.nodeVersion)}, uws ${String(record?.uws)}`;
  }
  return undefined;
}

export interface DashboardProcessOptions {
  /** Served to the page as /config.json. */
  readonly authUrl: string;
  readonly relayUrl: string;
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * The dashboard's production server from source, on loopback. It serves a built page and never
 * builds one: build apps/dashboard/dist/page first (its ensureDashboardBuilt), or point
 * DASHBOARD_PAGE_DIR at one.
 */
export function spawnDashboard(options: DashboardProcessOptions): Promise<AppProcess> {
  return spawnApp('apps/dashboard/src/main.ts', 'dashboard', {
    DASHBOARD_HOST: '127.0.0.1',
    DASHBOARD_PORT: '0',
    DASHBOARD_AUTH_URL: options.authUrl,
    DASHBOARD_RELAY_URL: options.relayUrl,
    LOG_LEVEL: 'info',
    ...options.env,
  });
}
