import { z } from 'zod';

/** What a process environment holds for one variable. */
export type RawEnvValue = string | undefined;
/** A schema for one environment variable: reads the raw text, yields the typed value. */
export type EnvVar<T> = z.ZodType<T, RawEnvValue>;

/**
 * Blank is unset. Kubernetes and shells turn a forgotten value into `VAR=` (an empty string), and
 * coercing that gave 0: a random port, no clock skew, untrimmed streams. Treating blank as unset
 * makes it the default, or a "required" refusal where there is no default.
 */
export function presentText(raw: RawEnvValue): string | undefined {
  return raw === undefined || raw.trim() === '' ? undefined : raw;
}

/** How a variable behaves when unset or blank. */
export type Unset<T> =
  /** The default, named in every message as "leave it unset for …". */
  | { fallback: T; fallbackText?: string }
  /** No default: refused, with this fix ("set it to …"). */
  | { required: string }
  /** Absent is meaningful: what it means, for the messages ("leave it unset to …"). */
  | { optional: string };

type Check<T> = (value: T) => string | null;

function leaveUnset<T>(unset: Unset<T>, show: (value: T) => string): string {
  if ('fallback' in unset) return ` or leave it unset for ${unset.fallbackText ?? show(unset.fallback)}`;
  if ('optional' in unset) return ` or leave it unset ${unset.optional}`;
  return '';
}

/**
 * The common shape: blank is unset; otherwise `parse` turns the text into a value or a problem.
 * A problem is reported as "<problem>; <fix>" (parseEnv adds the variable and its value).
 */
type Parse<T> = (text: string) => { value: T } | { problem: string };
function variable<T>(unset: { fallback: T } | { required: string }, parse: Parse<T>): EnvVar<T>;
function variable<T>(unset: Unset<T>, parse: Parse<T>): EnvVar<T | undefined>;
function variable<T>(unset: Unset<T>, parse: Parse<T>): EnvVar<T | undefined> {
  return z
    .string()
    .optional()
    .transform((raw, ctx): T | undefined => {
      const text = presentText(raw);
      if (text === undefined) {
        if ('fallback' in unset) return unset.fallback;
        if ('optional' in unset) return undefined;
        ctx.addIssue({ code: 'custom', message: `is required; ${unset.required}` });
        return z.NEVER;
      }
      const parsed = parse(text);
      if ('value' in parsed) return parsed.value;
      ctx.addIssue({ code: 'custom', message: parsed.problem });
      return z.NEVER;
    });
}

export interface IntOptions {
  min: number;
  max: number;
  /** What special values mean, e.g. "0 = any free port". */
  meaning?: string;
  /** Default: "set it to an integer in that range". */
  fix?: string;
}

/** An integer in [min, max], written in decimal digits ("1e3", "8080.5" and "0x10" are refused). */
export function envInt(options: IntOptions & { fallback: number; fallbackText?: string }): EnvVar<number>;
export function envInt(options: IntOptions & { required: string }): EnvVar<number>;
export function envInt(options: IntOptions & { optional: string }): EnvVar<number | undefined>;
export function envInt(options: IntOptions & Unset<number>): EnvVar<number | undefined> {
  const range = `must be an integer from ${options.min} to ${options.max}${options.meaning === undefined ? '' : ` (${options.meaning})`}`;
  const fix = `${options.fix ?? 'set it to an integer in that range'}${leaveUnset(options, String)}`;
  return variable<number>(options, (text) => {
    const trimmed = text.trim();
    const value = Number(trimmed);
    if (!/^[+-]?\d+$/.test(trimmed) || !Number.isSafeInteger(value) || value < options.min || value > options.max) {
      return { problem: `${range}; ${fix}` };
    }
    return { value };
  });
}

/** `true`/`false` (or `1`/`0`), any case. */
export function envBool(options: { fallback: boolean }): EnvVar<boolean> {
  return variable<boolean>(options, (text) => {
    const word = text.trim().toLowerCase();
    if (word === 'true' || word === '1') return { value: true };
    if (word === 'false' || word === '0') return { value: false };
    return { problem: `must be true or false (or 1 or 0); set one of those${leaveUnset(options, String)}` };
  });
}

/** One of a fixed set of words (exact, after trimming). */
export function envEnum<const V extends string>(values: readonly V[], options: { fallback: V } | { required: string }): EnvVar<V> {
  const isValue = (word: string): word is V => (values as readonly string[]).includes(word);
  return variable<V>(options, (text) => {
    const word = text.trim();
    if (isValue(word)) return { value: word };
    return { problem: `must be one of ${values.join(', ')}; set one of those${leaveUnset(options, String)}` };
  });
}

export interface TextOptions {
  /** A problem with a present value, or null; its message should end in the fix. */
  check?: Check<string>;
}

/** Free text, taken as written (not trimmed: it may be a password or an exact `aud`). */
export function envText(options: TextOptions & { fallback: string; fallbackText?: string }): EnvVar<string>;
export function envText(options: TextOptions & { required: string }): EnvVar<string>;
export function envText(options: TextOptions & { optional: string }): EnvVar<string | undefined>;
export function envText(options: TextOptions & Unset<string>): EnvVar<string | undefined> {
  return variable<string>(options, (text) => {
    const problem = options.check?.(text) ?? null;
    return problem === null ? { value: text } : { problem };
  });
}

/**
 * A URL whose scheme is one of `protocols` (without the colon), e.g. ['http', 'https'];
 * `noCredentials` for one fetched over HTTP, which `fetch` refuses to request with a user or
 * password in it (and which would then be logged at every attempt).
 */
export function urlCheck(protocols: readonly string[], example: string, options: { noCredentials?: boolean } = {}): Check<string> {
  return (text) => {
    const url = URL.canParse(text) ? new URL(text) : null;
    if (url === null || !protocols.includes(url.protocol.replace(/:$/, ''))) {
      return `must be a ${protocols.map((p) => `${p}://`).join(' or ')} URL; set it to one, e.g. ${example}`;
    }
    if (options.noCredentials === true && (url.username !== '' || url.password !== '')) {
      return `must not carry a user or password (fetch refuses such a URL); serve it without them, e.g. ${example}`;
    }
    return null;
  };
}

export interface ListOptions {
  /** A problem with one item, or null. */
  each?: Check<string>;
  /** Refuse a value that holds no item (e.g. ","). */
  nonEmpty?: boolean;
}

/** Comma-separated items, each trimmed; empty items are dropped. */
export function envList(options: ListOptions & { fallback: readonly string[]; fallbackText?: string }): EnvVar<string[]>;
export function envList(options: ListOptions & { required: string }): EnvVar<string[]>;
export function envList(options: ListOptions & Unset<readonly string[]>): EnvVar<string[] | undefined> {
  const show = (items: readonly string[]): string => (items.length === 0 ? 'none' : items.join(','));
  const unset: Unset<string[]> = 'fallback' in options ? { fallback: [...options.fallback] } : options;
  return variable<string[]>(unset, (text) => {
    const items = text
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== '');
    if (options.nonEmpty === true && items.length === 0) {
      return { problem: `holds no item; set a comma-separated list${leaveUnset(options, show)}` };
    }
    const problems = items.map((item) => options.each?.(item) ?? null).filter((p) => p !== null);
    if (problems.length > 0) return { problem: problems.join('; and ') };
    return { value: items };
  });
}
