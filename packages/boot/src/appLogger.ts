import { pino } from 'pino';
import type { Logger } from 'pino';

/** What stands in for a credential in a log line. */
const HIDDEN = '<not shown>';
/** How deep an error's own fields are searched for commands (causes, previousErrors). */
const MAX_DEPTH = 6;

/**
 * The logger every app writes with: pino, with `err` serialized so that no credential reaches a
 * log. ioredis puts the failed command on its errors (`command: { name, args }`), and the command
 * of a refused connection is `HELLO 3 AUTH <user> <password>` or `AUTH <password>`: pino's plain
 * error serializer wrote the Redis password into every connection warning.
 */
export function appLogger(name: string, level?: string): Logger {
  return pino({ name, ...(level === undefined ? {} : { level }), serializers: { err: serializeError } });
}

/** pino's error serializer, with the arguments of credential-bearing commands masked. */
export function serializeError(error: unknown): unknown {
  const serialized = error instanceof Error ? pino.stdSerializers.err(error) : error;
  return maskCommandSecrets(serialized, 0);
}

/** A copy of `value` in which every `{ name, args }` command that carries credentials has them masked. */
export function maskCommandSecrets(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v: unknown) => maskCommandSecrets(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(value)) out[key] = maskCommandSecrets(field, depth + 1);
  if (typeof out.name === 'string' && Array.isArray(out.args)) out.args = maskedArgs(out.name, out.args);
  return out;
}

/**
 * How many arguments follow each credential keyword: HELLO … AUTH <user> <password>;
 * MIGRATE … AUTH <password> | AUTH2 <user> <password>.
 */
const CREDENTIALS_AFTER = new Map<string, ReadonlyMap<string, number>>([
  ['hello', new Map([['auth', 2]])],
  [
    'migrate',
    new Map([
      ['auth', 1],
      ['auth2', 2],
    ]),
  ],
]);

function maskedArgs(command: string, args: readonly unknown[]): unknown[] {
  const name = command.toLowerCase();
  if (name === 'auth') return args.map(() => HIDDEN);
  const after = CREDENTIALS_AFTER.get(name);
  if (after === undefined) return [...args];
  const masked = [...args];
  for (let i = 0; i < masked.length; i++) {
    const count = after.get(String(masked[i]).toLowerCase()) ?? 0;
    for (let j = 1; j <= count && i + j < masked.length; j++) masked[i + j] = HIDDEN;
    i += count;
  }
  return masked;
}
