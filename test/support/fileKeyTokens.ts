import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTokenIssuer, generateSigningKey, jwksDocument, SigningKeySet } from '@streamgate/server';
import type { TokenIssuer } from '@streamgate/server';

export interface FileKeyTokensOptions {
  /** The signing key's `kid`. */
  readonly kid: string;
  readonly issuer: string;
  readonly audience: string;
  /** The target tokens name by default (a Redis or a JetStream target). */
  readonly redis: string;
}

/** A token issuer and the JWKS file relays started with spawnFileKeyRelay trust it through. */
export interface FileKeyTokens {
  readonly tokens: TokenIssuer;
  readonly jwksFile: string;
  /** The private key as an auth app's signing keys (`AUTH_SIGNING_KEYS`), for a file that also starts auth. */
  readonly signingKeysJson: string;
  /** Removes the JWKS file's directory. */
  remove(): Promise<void>;
}

/** A fresh ES256 key: tokens signed with it, and its public half in a JWKS file of its own. */
export async function fileKeyTokens(options: FileKeyTokensOptions): Promise<FileKeyTokens> {
  const key = await generateSigningKey('ES256', options.kid);
  const signingKeysJson = JSON.stringify([key]);
  const keys = await SigningKeySet.fromJson(signingKeysJson);
  if (!keys.ok) throw new Error(keys.error.message);
  const tokens = createTokenIssuer({ keys: keys.keys, issuer: options.issuer, audience: options.audience, redis: options.redis });
  const dir = await mkdtemp(join(tmpdir(), `${options.kid}-`));
  const jwksFile = join(dir, 'jwks.json');
  await writeFile(jwksFile, JSON.stringify(jwksDocument(keys.keys)));
  return { tokens, jwksFile, signingKeysJson, remove: () => rm(dir, { recursive: true, force: true }) };
}
