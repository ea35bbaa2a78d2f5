import { MAX_ENTRY_DATA_BYTES } from '@streamgate/protocol';
import type { PublishError } from './PublishError.js';

/**
 * The `payload_too_large` refusal for an encoded payload (the entry's `data` text) above
 * MAX_ENTRY_DATA_BYTES, or null. Checked before anything is sent: a relay would deliver a larger
 * entry as `malformed`, so writing it would only store what no subscriber can read.
 */
export function entrySizeError(dataText: string): Extract<PublishError, { code: 'payload_too_large' }> | null {
  // UTF-8 takes at most 3 bytes per UTF-16 code unit: short texts need no counting.
  if (dataText.length * 3 <= MAX_ENTRY_DATA_BYTES) return null;
  const bytes = Buffer.byteLength(dataText, 'utf8');
  if (bytes <= MAX_ENTRY_DATA_BYTES) return null;
  return {
    code: 'payload_too_large',
    retryable: false,
    field: 'payload',
    bytes,
    limitBytes: MAX_ENTRY_DATA_BYTES,
    message: `payload: its JSON is ${bytes} bytes, over the ${MAX_ENTRY_DATA_BYTES}-byte limit on an entry's data (MAX_ENTRY_DATA_BYTES); nothing was written`,
  };
}
