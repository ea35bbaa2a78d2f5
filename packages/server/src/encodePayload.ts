import { encodeEntryFields } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';
import { errorText } from './PublishError.js';
import type { PublishError } from './PublishError.js';

/**
 * A payload checked against its stream's schema (when it has one) and encoded as the entry's
 * `data` field, or the `payload_invalid` failure naming the first bad field.
 */
export function encodePayload<T>(stream: StreamRef<T>, payload: T): { ok: true; text: string } | { ok: false; error: PublishError } {
  let value: unknown = payload;
  if (stream.schema !== undefined) {
    const parsed = stream.schema.safeParse(payload);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const field = issue === undefined || issue.path.length === 0 ? 'payload' : `payload.${issue.path.join('.')}`;
      return {
        ok: false,
        error: {
          code: 'payload_invalid',
          retryable: false,
          field,
          message: `${field}: ${issue?.message ?? 'invalid'} (stream ${stream.name})`,
        },
      };
    }
    value = parsed.data;
  }
  try {
    return { ok: true, text: encodeEntryFields(value)[1] };
  } catch (error) {
    return {
      ok: false,
      error: {
        code: 'payload_invalid',
        retryable: false,
        field: 'payload',
        message: `payload: not JSON-serializable (${errorText(error)})`,
      },
    };
  }
}
