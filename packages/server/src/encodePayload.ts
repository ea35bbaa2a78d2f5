import type { StandardSchemaV1 } from '@standard-schema/spec';
import { encodeEntryFields } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';
import { errorText } from './PublishError.js';
import type { PublishError } from './PublishError.js';

type Encoded = { ok: true; text: string } | { ok: false; error: Extract<PublishError, { code: 'payload_invalid' }> };

/**
 * A payload checked against its stream's schema (any Standard Schema, when it has one) and
 * encoded as the entry's `data` field, or the `payload_invalid` failure naming the first bad
 * field. A schema that validates asynchronously is awaited, as tRPC does with its inputs.
 */
export async function encodePayload<T>(stream: StreamRef<T>, payload: T): Promise<Encoded> {
  let value: unknown = payload;
  if (stream.schema !== undefined) {
    let result: StandardSchemaV1.Result<T>;
    try {
      result = await stream.schema['~standard'].validate(payload);
    } catch (error) {
      // Standard Schema validators report problems as issues; one that throws is still the
      // payload's refusal, never a crashed publish.
      return invalid('payload', `payload: the schema threw (${errorText(error)}) (stream ${stream.name})`);
    }
    if (result.issues !== undefined) {
      const issue = result.issues[0];
      const path = (issue?.path ?? []).map((segment) => String(typeof segment === 'object' ? segment.key : segment));
      const field = path.length === 0 ? 'payload' : `payload.${path.join('.')}`;
      return invalid(field, `${field}: ${issue?.message ?? 'invalid'} (stream ${stream.name})`);
    }
    value = result.value;
  }
  try {
    return { ok: true, text: encodeEntryFields(value)[1] };
  } catch (error) {
    return invalid('payload', `payload: not JSON-serializable (${errorText(error)})`);
  }
}

function invalid(field: string, message: string): Encoded {
  return { ok: false, error: { code: 'payload_invalid', retryable: false, field, message } };
}
