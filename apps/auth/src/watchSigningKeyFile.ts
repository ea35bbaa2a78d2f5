import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { watchTextFile } from '@streamgate/boot';
import type { TextFileWatch } from '@streamgate/boot';
import type { SigningKeySet } from '@streamgate/server';

export interface SigningKeyFileWatch {
  readonly path: string;
  readonly pollMs: number;
  readonly keys: SigningKeySet;
  readonly logger: Logger;
  /** Counts each re-read: `loaded`, or `invalid` (the keys in force were kept). */
  readonly onReload: (outcome: 'loaded' | 'invalid') => void;
}

/**
 * Follows AUTH_SIGNING_KEYS_FILE so a rotation step is a file update, not a restart: the issuer
 * signs with the new first key, and the JWKS publishes the new list, from the next request on.
 */
export async function watchSigningKeyFile(options: SigningKeyFileWatch): Promise<TextFileWatch> {
  const { keys, logger } = options;
  let applying = Promise.resolve();
  const apply = async (text: string): Promise<void> => {
    const result = await keys.reload(text);
    options.onReload(result.ok ? 'loaded' : 'invalid');
    if (result.ok) logger.info({ kids: keys.all.map((k) => k.kid), signing: keys.current.kid }, 'AUTH_SIGNING_KEYS_FILE reloaded');
    else logger.error({ problem: result.error.message }, 'AUTH_SIGNING_KEYS_FILE changed but is invalid: keeping the keys in force');
  };
  return watchTextFile(options.path, {
    initial: await readFile(options.path, 'utf8'),
    pollMs: options.pollMs,
    // One reload at a time, in file order: a slower import must not let an older text win.
    onText: (text) => {
      applying = applying.then(() => apply(text));
    },
    onError: (error) => logger.warn({ err: error }, 'AUTH_SIGNING_KEYS_FILE could not be read; keeping the keys in force'),
  });
}
