import { relayError } from '@streamgate/protocol';
import type { VerifyResult } from '../auth/TokenVerifier.js';
import type { RevocationList } from './RevocationList.js';

/** What a session asks of token checking. */
export interface Verifier {
  verify(token: string): Promise<VerifyResult>;
}

/**
 * The token checks plus revocation: a token a revocation in force covers is refused with
 * `revoked` at subscribe and at refresh alike, for as long as the token would otherwise be valid.
 */
export class RevokingVerifier implements Verifier {
  constructor(
    private readonly inner: Verifier,
    private readonly revocations: RevocationList,
  ) {}

  async verify(token: string): Promise<VerifyResult> {
    const result = await this.inner.verify(token);
    if (!result.ok) return result;
    const { sub, stream, iat } = result.claims;
    if (!this.revocations.refuses({ sub, stream, iat })) return result;
    return {
      ok: false,
      error: relayError('revoked', `tokens of this subject or stream issued before a revocation are refused; get a new token`),
    };
  }
}
