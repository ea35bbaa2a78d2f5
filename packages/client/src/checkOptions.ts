// zod/mini, as @streamgate/protocol uses: a browser bundle carries only the checks used here.
import * as z from 'zod/mini';
import { streamIdSchema } from '@streamgate/protocol';

/*
 * The SDK's options come from the app's code, often plain JavaScript: checked once where they
 * enter, so a wrong one is a TypeError naming it at the call rather than a crash or a retry loop
 * later (a logger without `debug` threw at the first socket error; `requestTimeoutMs: 0`
 * withdrew every subscribe at once, for ever). The static types say the same; this is for
 * callers they do not reach.
 */

const fn = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', { message: 'must be a function' });
const optionalFn = z.optional(fn);
const milliseconds = () => z.number({ message: 'must be a finite number of milliseconds' });
const duration = (min: 'zero' | 'positive') =>
  milliseconds().check(
    z.refine((v) => (min === 'zero' ? v >= 0 : v > 0), { message: min === 'zero' ? 'must be 0 or more' : 'must be more than 0' }),
  );

const clientOptionsSchema = z.looseObject({
  urls: z.array(z.string({ message: 'must be a string' }).check(z.minLength(1, { message: 'must not be empty' })), {
    message: 'must be an array of relay URLs',
  }),
  WebSocket: optionalFn,
  // Their bounds are resolveBackoff's, a RangeError as documented.
  backoff: z.optional(z.looseObject({ baseMs: z.optional(milliseconds()), maxMs: z.optional(milliseconds()) })),
  logger: z.optional(z.looseObject({ debug: fn, warn: fn, error: fn }, { message: 'must be an object with debug, warn and error' })),
  onError: optionalFn,
  healthyAfterMs: z.optional(duration('zero')),
  random: optionalFn,
  livenessGraceMs: z.optional(duration('zero')),
  requestTimeoutMs: z.optional(duration('positive')),
  clock: z.optional(z.looseObject({ now: fn, after: fn }, { message: 'must be an object with now and after' })),
});

const subscribeOptionsSchema = z.looseObject({
  getToken: fn,
  onEvent: fn,
  from: z.optional(streamIdSchema),
  onStateChange: optionalFn,
  onError: optionalFn,
  onRecovery: optionalFn,
  onReset: optionalFn,
});

function check(schema: z.ZodMiniType, value: unknown, what: string): void {
  if (typeof value !== 'object' || value === null) throw new TypeError(`${what}: must be an object`);
  const parsed = schema.safeParse(value);
  if (parsed.success) return;
  const issue = parsed.error.issues[0];
  const path = issue?.path ?? [];
  const missing = at(value, path) === undefined;
  const message = missing ? 'is required' : (issue?.message ?? 'invalid');
  throw new TypeError(`${what}: ${path.map(String).join('.')} ${message}`.replace(':  ', ': '));
}

function at(value: unknown, path: readonly PropertyKey[]): unknown {
  let here = value;
  for (const key of path) {
    if (typeof here !== 'object' || here === null) return undefined;
    here = (here as Record<PropertyKey, unknown>)[key];
  }
  return here;
}

/** Throws a TypeError naming the first option that is not what `RelayClientOptions` says. */
export function checkClientOptions(options: unknown): void {
  check(clientOptionsSchema, options, 'RelayClient options');
}

/** Throws a TypeError naming the first option that is not what `SubscribeOptions` says. */
export function checkSubscribeOptions(options: unknown): void {
  check(subscribeOptionsSchema, options, 'subscribe options');
}
