import { createHash, timingSafeEqual } from 'node:crypto';

/** Why an operator request was refused; the message names the fix, never the credential. */
export type OperatorRefusal = {
  readonly code: 'credential_missing' | 'credential_wrong';
  readonly retryable: false;
  readonly message: string;
};

/** Hex sha256 of a credential, as AUTH_OPERATOR_CREDENTIAL_SHA256 holds it. */
export function sha256Hex(credential: string): string {
  return createHash('sha256').update(credential, 'utf8').digest('hex');
}

/**
 * Checks `Authorization: Bearer <credential>` against the configured sha256. Both sides are
 * digests of fixed length, so the comparison takes the same time whatever the caller sent:
 * neither the credential's length nor how much of it matched leaks through timing.
 */
export function checkOperatorCredential(authorization: string | undefined, expectedSha256Hex: string): OperatorRefusal | null {
  const match = /^Bearer[ ]+(\S.*)$/i.exec(authorization?.trim() ?? '');
  const credential = match?.[1];
  if (credential === undefined) {
    return { code: 'credential_missing', retryable: false, message: 'send the operator credential as Authorization: Bearer <credential>' };
  }
  const expected = Buffer.from(expectedSha256Hex, 'hex');
  const actual = createHash('sha256').update(credential, 'utf8').digest();
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    return { code: 'credential_wrong', retryable: false, message: 'the operator credential is not the one configured' };
  }
  return null;
}
