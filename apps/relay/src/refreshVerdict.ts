import { relayError } from '@streamgate/protocol';
import type { RelayClaims, RelayError } from '@streamgate/protocol';
import type { VerifyResult } from './auth/TokenVerifier.js';

/** What a subscription's refresh is checked against: the grant of the token it was opened with. */
export interface RefreshedGrant {
  readonly subject: string;
  readonly stream: string;
  readonly target: string;
}

export type RefreshVerdict =
  | { readonly outcome: 'ok'; readonly claims: RelayClaims }
  | { readonly outcome: 'refused'; readonly error: RelayError }
  /** The issuer now places the stream on another target (docs/protocol.md §16). */
  | { readonly outcome: 'moved' };

/**
 * Whether a `refresh` token may take over `grant`'s subscription. A valid token for another
 * subject or stream is refused; one for another Redis target means the subscription reads a
 * Redis that no longer receives its entries, so it must end and the client subscribe again.
 */
export function refreshVerdict(grant: RefreshedGrant, verified: VerifyResult): RefreshVerdict {
  if (!verified.ok) return { outcome: 'refused', error: verified.error };
  const c = verified.claims;
  if (c.sub !== grant.subject)
    return { outcome: 'refused', error: relayError('token_subject_mismatch', 'refreshed token names another subject') };
  if (c.stream !== grant.stream)
    return { outcome: 'refused', error: relayError('token_stream_mismatch', 'refreshed token names another stream') };
  if (c.redis !== grant.target) return { outcome: 'moved' };
  return { outcome: 'ok', claims: c };
}
