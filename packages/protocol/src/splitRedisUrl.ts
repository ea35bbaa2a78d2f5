import { normalizeRedisTarget } from './redisTarget.js';

/** A Redis URL an app connects with: the target it names (normalized, no credentials) and the credentials it carried. */
export interface SplitRedisUrl {
  readonly target: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
}

/**
 * Splits a Redis URL that may carry credentials (an app's own connection, e.g. an operations
 * Redis) into its target and credentials, percent-decoded. Null when it is not a target, or when
 * its credentials are not valid percent-encoding (`us%zz`), so config parsing can name the
 * variable instead of throwing a URIError.
 */
export function splitRedisUrl(raw: string): SplitRedisUrl | null {
  if (!URL.canParse(raw)) return null;
  const url = new URL(raw);
  const username = decodePart(url.username);
  const password = decodePart(url.password);
  if (username === null || password === null) return null;
  url.username = '';
  url.password = '';
  const target = normalizeRedisTarget(url.href);
  return target === null ? null : { target, username, password };
}

function decodePart(part: string): string | undefined | null {
  if (part === '') return undefined;
  try {
    return decodeURIComponent(part);
  } catch (error) {
    // Only malformed percent-encoding is expected here; anything else is a bug and propagates.
    if (error instanceof URIError) return null;
    throw error;
  }
}
