/**
 * The `Nats-Msg-Id` of an entry of `stream`: `<stream> <dedupeId>`, the form createJetStreamWriter
 * gives an idempotency key (a space is in no stream name, so the pair maps to one id). A header
 * value cannot hold control characters, so those (and `%`) are written `%XX`: dedupe ids stay
 * distinct, and the printable ones adapters use (`7:b:0xab…`, `trade:42`) stay as they are.
 */
export function ingestMsgId(stream: string, dedupeId: string): string {
  // eslint-disable-next-line no-control-regex
  const safe = dedupeId.replace(/[%\u0000-\u001f\u007f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`);
  return `${stream} ${safe}`;
}
