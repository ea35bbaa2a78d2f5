/**
 * The steps of the auth service's signing key file (a JSON array of private JWKs: the first signs,
 * all are published in the JWKS): make one, and rotate in three steps. deploy/README.md ("Rotate
 * signing keys") says how long to wait between them. Used by scripts/signingKeys.ts.
 */
import { generateSigningKey, SigningKeySet } from '@streamgate/server';

export type Jwk = Record<string, unknown> & { kid: string };
type Algorithm = Parameters<typeof generateSigningKey>[0];
const ALGORITHMS: readonly Algorithm[] = ['ES256', 'EdDSA'];

export type SigningKeyFileError = { code: 'usage' | 'key_file_invalid'; retryable: false; message: string };
export type SigningKeyFileResult = { ok: true; keys: Jwk[] } | { ok: false; error: SigningKeyFileError };
/** Reads a file's text; returns an error message instead of throwing. */
export type ReadText = (path: string) => { ok: true; text: string } | { ok: false; message: string };

const usage = (message: string): SigningKeyFileResult => ({ ok: false, error: { code: 'usage', retryable: false, message } });
const invalid = (message: string): SigningKeyFileResult => ({ ok: false, error: { code: 'key_file_invalid', retryable: false, message } });

/** Reads a key file, validated exactly as the auth service will validate it. */
async function readKeys(path: string, readText: ReadText): Promise<SigningKeyFileResult> {
  const read = readText(path);
  if (!read.ok) return invalid(`cannot read ${path} (${read.message})`);
  const checked = await SigningKeySet.fromJson(read.text);
  if (!checked.ok) return invalid(`${path}: ${checked.error.message}`);
  const parsed = JSON.parse(read.text) as unknown;
  // fromJson accepted it, so it is an array of JWKs with kids, bare or under `keys`.
  const list = (Array.isArray(parsed) ? parsed : (parsed as { keys: unknown[] }).keys) as Jwk[];
  return { ok: true, keys: list };
}

const kidsOf = (keys: readonly Jwk[]): string => keys.map((k) => `"${k.kid}"`).join(', ');

/**
 *   new <kid> [alg]          a file with one key
 *   add <file> <kid> [alg]   step 1: publish a new key, still signing with the current one
 *   promote <file> <kid>     step 2: sign with <kid>, keep the others published
 *   retire <file> <kid>      step 3: drop a key that no longer signs
 * The result is checked the way auth will load it.
 */
export async function editSigningKeyFile(argv: readonly string[], readText: ReadText): Promise<SigningKeyFileResult> {
  const [command, first, second, third] = argv;
  const algorithm = (raw: string | undefined): Algorithm | null => ALGORITHMS.find((a) => a === (raw ?? 'ES256')) ?? null;
  let result: SigningKeyFileResult;
  switch (command) {
    case 'new': {
      const alg = algorithm(second);
      if (first === undefined) return usage('missing <kid>');
      if (alg === null) return usage(`algorithm "${String(second)}" is not one of ${ALGORITHMS.join(', ')}`);
      result = { ok: true, keys: [await generateSigningKey(alg, first)] };
      break;
    }
    case 'add':
    case 'promote':
    case 'retire': {
      if (first === undefined || second === undefined) return usage(`${command} needs <file> <kid>`);
      const current = await readKeys(first, readText);
      if (!current.ok) return current;
      const keys = current.keys;
      const index = keys.findIndex((k) => k.kid === second);
      if (command === 'add') {
        const alg = algorithm(third);
        if (alg === null) return usage(`algorithm "${String(third)}" is not one of ${ALGORITHMS.join(', ')}`);
        if (index >= 0) return usage(`${first} already has a key "${second}": pick a new kid`);
        // Appended, not prepended: published now, signing only after `promote`.
        result = { ok: true, keys: [...keys, await generateSigningKey(alg, second)] };
      } else if (index < 0) {
        return usage(`${first} has no key "${second}" (it has ${kidsOf(keys)})`);
      } else if (command === 'promote') {
        result = { ok: true, keys: [...keys.slice(index, index + 1), ...keys.slice(0, index), ...keys.slice(index + 1)] };
      } else {
        if (index === 0) return usage(`"${second}" is the signing key: promote another key first`);
        result = { ok: true, keys: keys.filter((k) => k.kid !== second) };
      }
      break;
    }
    case undefined:
      return usage('missing command');
    default:
      return usage(`unknown command "${command}"`);
  }
  const checked = await SigningKeySet.fromJwks(result.keys);
  return checked.ok ? result : invalid(`the result would not load in auth: ${checked.error.message}`);
}
