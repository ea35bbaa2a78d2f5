import type { IncomingMessage } from 'node:http';

export type JsonBody = { ok: true; value: unknown } | { ok: false; message: string };

/** Bodies here are a few hundred bytes; a megabyte is a client bug, refused without holding it. */
const MAX_BODY_BYTES = 1 << 20;

/**
 * Reads a request body to its end and parses it as JSON. Malformed or oversized bodies come back
 * as `{ok: false}` for a 400; a request the client abandons mid-body rejects.
 */
export async function readJsonBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<JsonBody> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Keep draining so the client gets its 400 instead of a reset mid-upload.
    if (size <= maxBytes) chunks.push(chunk);
  }
  if (size > maxBytes) return { ok: false, message: `body is larger than ${maxBytes} bytes` };
  const text = Buffer.concat(chunks).toString('utf8');
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, message: `body is not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}
