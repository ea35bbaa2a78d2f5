import type { ConfigError } from './parseEnv.js';

/**
 * Thrown from an app's start when what a variable names turns out to be wrong (a key file that
 * is missing or does not parse): the variables themselves parsed, so only the start can tell.
 * bootApp exits 78 with it, as for a bad variable, not 1: a restart will not help until the
 * configuration is changed.
 */
export class StartupConfigError extends Error {
  constructor(readonly config: ConfigError) {
    super(config.message);
    this.name = 'StartupConfigError';
  }
}
