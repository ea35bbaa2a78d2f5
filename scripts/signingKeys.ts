/**
 * Makes and rotates the auth service's signing key file (the `keys.json` of the
 * auth-signing-keys Secret, read through AUTH_SIGNING_KEYS_FILE). Prints the new file on stdout
 * and nothing else, so it pipes into `kubectl create secret`; messages go to stderr and never
 * echo a key. Steps and their order: scripts/signingKeyFile.ts and deploy/README.md.
 *
 *   node --conditions=streamgate-source --import tsx scripts/signingKeys.ts new k-2026-11
 */
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { editSigningKeyFile } from './signingKeyFile.js';
import type { ReadText } from './signingKeyFile.js';

const USAGE = `usage: scripts/signingKeys.ts new <kid> [ES256|EdDSA]
       scripts/signingKeys.ts add <file> <kid> [ES256|EdDSA]   (rotation step 1)
       scripts/signingKeys.ts promote <file> <kid>             (rotation step 2)
       scripts/signingKeys.ts retire <file> <kid>              (rotation step 3)`;

const readText: ReadText = (path) => {
  try {
    return { ok: true, text: readFileSync(path, 'utf8') };
  } catch (error) {
    return { ok: false, message: error instanceof Error ? error.message : String(error) };
  }
};

const result = await editSigningKeyFile(process.argv.slice(2), readText);
if (result.ok) {
  process.stderr.write(`signing: ${result.keys[0]?.kid ?? ''}; published: ${result.keys.map((k) => k.kid).join(', ')}\n`);
  process.stdout.write(`${JSON.stringify(result.keys)}\n`);
} else {
  process.stderr.write(`signingKeys: ${result.error.message}\n${result.error.code === 'usage' ? `${USAGE}\n` : ''}`);
  process.exitCode = 2;
}
