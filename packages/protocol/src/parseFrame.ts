import type { z } from 'zod';
import { clientFrameSchema, clientOps, serverFrameSchema } from './frames.js';
import type { ClientFrame, ServerFrame } from './frames.js';
import { relayError } from './errorCodes.js';
import type { RelayError } from './errorCodes.js';

export type ParseResult<T> = { ok: true; frame: T } | { ok: false; error: RelayError };

function describe(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(frame)'}: ${issue.message}`)
    .join('; ');
}

/** Parses one text frame from a client. Never throws: every failure is a typed error naming the field. */
export function parseClientFrame(text: string): ParseResult<ClientFrame> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: relayError('frame_not_json', 'frame is not valid JSON') };
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, error: relayError('frame_invalid', '(frame): must be a JSON object') };
  }
  const op = (json as { op?: unknown }).op;
  if (typeof op !== 'string' || !(clientOps as readonly string[]).includes(op)) {
    return {
      ok: false,
      error: relayError('frame_unknown_op', `op: must be one of ${clientOps.join(', ')}`),
    };
  }
  const parsed = clientFrameSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: relayError('frame_invalid', describe(parsed.error)) };
  return { ok: true, frame: parsed.data };
}

/** Parses one text frame from a relay. */
export function parseServerFrame(text: string): ParseResult<ServerFrame> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, error: relayError('frame_not_json', 'frame is not valid JSON') };
  }
  const parsed = serverFrameSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: relayError('frame_invalid', describe(parsed.error)) };
  return { ok: true, frame: parsed.data };
}
