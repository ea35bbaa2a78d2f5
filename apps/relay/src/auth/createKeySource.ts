import { readFileSync } from 'node:fs';
import { createLocalJWKSet, createRemoteJWKSet } from 'jose';
import type { JWTVerifyGetKey } from 'jose';
import { backoffDelay } from '@streamgate/protocol';
import { configError, StartupConfigError, watchTextFile } from '@streamgate/boot';
import { parseJwksFile } from './parseJwksFile.js';

export interface KeySource {
  readonly getKey: JWTVerifyGetKey;
  /** Resolves once keys are loaded; readiness waits for it. */
  readonly ready: Promise<void>;
  readonly loaded: () => boolean;
  /** The kids of the keys in force now, for /metrics: operators watch a rotation step arrive. */
  kids(): string[];
  close(): void;
}

export type KeySourceConfig =
  | { kind: 'remote'; url: string; refreshSeconds: number }
  | { kind: 'file'; path: string; pollMs: number; onReload?: (outcome: KeyFileReload) => void };

/** What a re-read of RELAY_JWKS_FILE did: the keys now in force, or why the old ones were kept. */
export type KeyFileReload = { outcome: 'loaded'; kids: string[] } | { outcome: 'invalid'; message: string };

/**
 * The relay's signing keys. A remote JWKS is fetched at boot and refreshed in the background,
 * never on a client's connect; an unknown `kid` triggers at most one refetch per cooldown
 * (jose's), so forged kids cannot make the relay hammer the auth service.
 */
export function createKeySource(config: KeySourceConfig, onError: (error: Error) => void): KeySource {
  if (config.kind === 'file') {
    // A bad file at boot stops the relay with a message naming what to fix, rather than refusing
    // every token later; a bad file written later is reported and the keys in force are kept, so
    // a typo in a rotation step never turns into refusing every token.
    const initial = readKeyFile(config.path);
    const parsed = parseJwksFile(config.path, initial);
    if (!parsed.ok) throw keyFileError(parsed.message);
    let current = createLocalJWKSet(parsed.jwks);
    let kids = parsed.jwks.keys.map((k) => k.kid ?? '');
    const watch = watchTextFile(config.path, {
      initial,
      pollMs: config.pollMs,
      onText: (text) => {
        const next = parseJwksFile(config.path, text);
        if (!next.ok) {
          config.onReload?.({ outcome: 'invalid', message: next.message });
          return;
        }
        current = createLocalJWKSet(next.jwks);
        kids = next.jwks.keys.map((k) => k.kid ?? '');
        config.onReload?.({ outcome: 'loaded', kids });
      },
      onError: onError,
    });
    return {
      getKey: (header, token) => current(header, token),
      ready: Promise.resolve(),
      loaded: () => true,
      kids: () => kids,
      close: () => watch.close(),
    };
  }
  const remote = createRemoteJWKSet(new URL(config.url), {
    cooldownDuration: 30_000,
    // Keys stay usable however long the auth service is down: the background refresh keeps them
    // current, and an expiring cache would turn an auth outage into refusing every token.
    cacheMaxAge: Infinity,
    timeoutDuration: 5_000,
  });
  let isLoaded = false;
  let closed = false;
  let timer: NodeJS.Timeout | null = null;
  const load = async (): Promise<void> => {
    for (let attempt = 0; !closed; attempt++) {
      try {
        await remote.reload();
        isLoaded = true;
        return;
      } catch (error) {
        onError(error as Error);
        await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, 200, 10_000)));
      }
    }
  };
  const ready = load().then(() => {
    if (closed) return;
    timer = setInterval(() => {
      remote.reload().catch((error: unknown) => onError(error as Error));
    }, config.refreshSeconds * 1000);
    timer.unref();
  });
  return {
    getKey: remote,
    ready,
    loaded: () => isLoaded,
    kids: () => (remote.jwks()?.keys ?? []).map((k) => k.kid ?? ''),
    close: () => {
      closed = true;
      if (timer !== null) clearInterval(timer);
    },
  };
}

/** A key file that is missing or invalid at boot is a configuration error (exit 78), naming RELAY_JWKS_FILE. */
function keyFileError(message: string): StartupConfigError {
  return new StartupConfigError(configError('relay', [{ variable: 'RELAY_JWKS_FILE', message }]));
}

function readKeyFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw keyFileError(`RELAY_JWKS_FILE ${path} cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
}
