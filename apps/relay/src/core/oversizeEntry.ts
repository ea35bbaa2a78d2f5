import { ENTRY_DATA_FIELD } from '@streamgate/protocol';

/**
 * Why an entry is not relayed whole, when its `data` value is over `maxBytes` of UTF-8: the
 * `malformed` reason, or null. An event frame that large would sit in the socket's send buffer
 * past the slow-consumer cut, the client would resume from just before it, and the catch-up
 * would send it again: a disconnect loop for every subscriber of the stream. Checked before the
 * value is parsed as JSON, which would cost the most on exactly these entries.
 */
export function oversizeEntry(fields: readonly string[], maxBytes: number): string | null {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== ENTRY_DATA_FIELD) continue;
    const value = fields[i + 1] as string;
    // UTF-8 takes at most 3 bytes per UTF-16 code unit: most values need no counting.
    if (value.length * 3 <= maxBytes) return null;
    const bytes = Buffer.byteLength(value, 'utf8');
    return bytes <= maxBytes
      ? null
      : `field "${ENTRY_DATA_FIELD}" is ${bytes} bytes, over this relay's limit of ${maxBytes} (RELAY_MAX_ENTRY_BYTES)`;
  }
  return null;
}
