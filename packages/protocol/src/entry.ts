/**
 * The stream entry format in Redis. An entry is relayed when it has a field named `data` whose
 * value is JSON text; other fields are ignored. A producer in any language that runs
 *   XADD <stream> MAXLEN ~ <n> * data '<json>'
 * is relayed exactly like our own publisher.
 */
export const ENTRY_DATA_FIELD = 'data';

export function encodeEntryFields(payload: unknown): [string, string] {
  const json = JSON.stringify(payload);
  if (json === undefined) throw new TypeError('payload is not JSON-serializable');
  return [ENTRY_DATA_FIELD, json];
}

export type DecodedEntry = { ok: true; json: string } | { ok: false; reason: string };

/**
 * Finds the `data` field in a flat `[field, value, …]` list as Redis returns it and checks that
 * it is JSON. The JSON text is returned as is, so the relay can splice it into a frame without
 * re-serializing.
 */
export function decodeEntryFields(fields: readonly string[]): DecodedEntry {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== ENTRY_DATA_FIELD) continue;
    const value = fields[i + 1] as string;
    try {
      JSON.parse(value);
    } catch {
      return { ok: false, reason: `field "${ENTRY_DATA_FIELD}" is not JSON` };
    }
    return { ok: true, json: value };
  }
  return { ok: false, reason: `entry has no "${ENTRY_DATA_FIELD}" field` };
}
