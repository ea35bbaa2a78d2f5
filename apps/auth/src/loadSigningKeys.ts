import { readFile } from 'node:fs/promises';
import { generateSigningKey, SigningKeySet } from '@streamgate/server';
import type { SigningKeySetResult } from '@streamgate/server';
import type { SigningKeySource } from './config.js';

/** Resolves the configured key source to a key set; errors name the variable to fix. */
export async function loadSigningKeys(source: SigningKeySource): Promise<SigningKeySetResult> {
  switch (source.kind) {
    case 'inline':
      return prefix('AUTH_SIGNING_KEYS', await SigningKeySet.fromJson(source.json));
    case 'file': {
      let json: string;
      try {
        json = await readFile(source.path, 'utf8');
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return {
          ok: false,
          error: {
            code: 'signing_keys_invalid',
            retryable: false,
            message: `AUTH_SIGNING_KEYS_FILE: cannot read ${source.path} (${reason})`,
          },
        };
      }
      return prefix(`AUTH_SIGNING_KEYS_FILE (${source.path})`, await SigningKeySet.fromJson(json));
    }
    case 'generate':
      return SigningKeySet.fromJwks([await generateSigningKey('ES256', `dev-${Date.now().toString(36)}`)]);
  }
}

function prefix(variable: string, result: SigningKeySetResult): SigningKeySetResult {
  if (result.ok) return result;
  return { ok: false, error: { ...result.error, message: `${variable}: ${result.error.message}` } };
}
