import type { z } from 'zod';
import type { RawEnvValue } from './envVars.js';

export type Env = Readonly<Record<string, RawEnvValue>>;

/** One bad variable (or topology field), and its message: the name, the value's problem, the fix. */
export interface ConfigProblem {
  readonly variable: string;
  readonly message: string;
}

/** Every problem of one configuration, found in one pass. */
export interface ConfigError {
  readonly code: 'config_invalid';
  readonly retryable: false;
  readonly problems: readonly ConfigProblem[];
  /** `invalid <app> configuration (N problems):` then one line per problem. */
  readonly message: string;
}

export type ConfigResult<T> = { ok: true; config: T } | { ok: false; error: ConfigError };

export interface ParseEnvOptions {
  /** Names the app in the message: "invalid relay configuration". */
  app: string;
  /** Variables whose values never appear in a message (passwords, private keys). */
  secret?: readonly string[];
}

const MAX_SHOWN = 120;

/**
 * The value as a message shows it: quoted, credentials in URLs masked (a Redis URL with a password
 * is a common mistake, and the message goes to logs), long values cut.
 */
export function showValue(variable: string, raw: RawEnvValue, secret: readonly string[] = []): string {
  if (raw === undefined) return `${variable} (unset)`;
  if (secret.includes(variable)) return `${variable}=<${raw.length} characters, not shown>`;
  const masked = raw.split(',').map(maskCredentials).join(',');
  const cut = masked.length > MAX_SHOWN ? `${masked.slice(0, MAX_SHOWN)}…` : masked;
  return `${variable}=${JSON.stringify(cut)}`;
}

/** A scheme and its slashes (`redis://`, or `redis:/` mistyped), before which nothing is masked. */
const SCHEME = /^\s*[A-Za-z][A-Za-z0-9+.-]*:\/+/;

/**
 * One list item with everything from after its scheme up to its last `@` masked, so a password
 * holding `/` or `@` is masked whole, and so is one in a URL mistyped with one slash or none
 * (`redis:/u:pw@host`, `u:pw@host`): such a URL is refused, and its message must not show it.
 */
function maskCredentials(item: string): string {
  const at = item.lastIndexOf('@');
  if (at === -1) return item;
  const head = SCHEME.exec(item)?.[0] ?? '';
  return `${head}<credentials>${item.slice(at)}`;
}

/** A problem with a variable: "RELAY_PORT="abc": must be …; set it to …". */
export function variableProblem(variable: string, raw: RawEnvValue, problem: string, secret?: readonly string[]): ConfigProblem {
  return { variable, message: `${showValue(variable, raw, secret)}: ${problem}` };
}

export function configError(app: string, problems: readonly ConfigProblem[]): ConfigError {
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  return {
    code: 'config_invalid',
    retryable: false,
    problems,
    message: `invalid ${app} configuration (${count}):\n${problems.map((p) => `  ${p.message}`).join('\n')}`,
  };
}

/** The problems in a zod error over the environment, each named after its variable. */
export function envProblems(issues: readonly z.core.$ZodIssue[], env: Env, secret?: readonly string[]): ConfigProblem[] {
  return issues.map((issue) => {
    const variable = String(issue.path[0] ?? 'environment');
    return variableProblem(variable, env[variable], issue.message, secret);
  });
}

/**
 * Parses the environment with one schema (an object of envVars fields, with cross-variable
 * checks that run whenever the variables they read are valid) and reports every problem at once.
 */
export function parseEnv<T>(schema: z.ZodType<T, Env>, env: Env, options: ParseEnvOptions): ConfigResult<T> {
  const result = schema.safeParse(env);
  if (result.success) return { ok: true, config: result.data };
  return { ok: false, error: configError(options.app, envProblems(result.error.issues, env, options.secret)) };
}

/**
 * The `when` of a cross-variable check: run it when the variables it reads parsed, whatever else
 * failed (zod skips object refinements after any field error, which would hide these problems
 * until the first ones are fixed).
 */
export function whenValid(...variables: readonly string[]): { when: (payload: z.core.ParsePayload) => boolean } {
  return { when: (payload) => !payload.issues.some((issue) => variables.includes(String(issue.path?.[0]))) };
}
