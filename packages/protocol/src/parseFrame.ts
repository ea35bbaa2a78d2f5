import { config } from 'zod/mini';
import type { core } from 'zod/mini';
import en from 'zod/v4/locales/en.js';
import { clientFrameSchema, clientOps, serverFrameSchema, subscriptionIdSchema } from './frames.js';
import type { ClientFrame, ServerFrame } from './frames.js';
import { relayError } from './errorCodes.js';
import type { RelayError } from './errorCodes.js';

// zod/mini ships no messages ("Invalid input" for everything); a refusal must say what was
// wrong, in the same words whichever zod build a process loaded first (classic sets English too).
config(en());

/** On failure, `sid` is the frame's subscription id when it had a valid one, so the error can name it. */
export type ParseResult<T> = { ok: true; frame: T } | { ok: false; error: RelayError; sid?: string };

function describe(error: core.$ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(frame)'}: ${issue.message}`)
    .join('; ');
}

/** The frame's JSON value, or the refusal every frame that is not JSON gets. */
function readJson(text: string): { ok: true; json: unknown } | { ok: false; error: RelayError } {
  try {
    return { ok: true, json: JSON.parse(text) };
  } catch {
    return { ok: false, error: relayError('frame_not_json', 'frame is not valid JSON') };
  }
}

/** Parses one text frame from a client. Never throws: every failure is a typed error naming the field. */
export function parseClientFrame(text: string): ParseResult<ClientFrame> {
  const read = readJson(text);
  if (!read.ok) return read;
  const json = read.json;
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return { ok: false, error: relayError('frame_invalid', '(frame): must be a JSON object') };
  }
  const rawSid = (json as { sid?: unknown }).sid;
  // Most frames without a sid are pings: no failed parse (and its error object) for them.
  const sid = rawSid !== undefined && subscriptionIdSchema.safeParse(rawSid).success ? (rawSid as string) : undefined;
  const fail = (error: RelayError): ParseResult<ClientFrame> => (sid === undefined ? { ok: false, error } : { ok: false, error, sid });
  const op = (json as { op?: unknown }).op;
  if (typeof op !== 'string' || !(clientOps as readonly string[]).includes(op)) {
    return fail(relayError('frame_unknown_op', `op: must be one of ${clientOps.join(', ')}`));
  }
  if (op === 'subscribe' || op === 'refresh') {
    const token = (json as { token?: unknown }).token;
    // A missing token is an authorization refusal, not a malformed frame: it gets its own code.
    if (token === undefined || token === null || token === '') {
      return fail(relayError('token_missing', 'token: a relay token is required'));
    }
  }
  const parsed = clientFrameSchema.safeParse(json);
  if (!parsed.success) return fail(relayError('frame_invalid', describe(parsed.error)));
  return { ok: true, frame: parsed.data };
}

/** Parses one text frame from a relay. */
export function parseServerFrame(text: string): ParseResult<ServerFrame> {
  const read = readJson(text);
  if (!read.ok) return read;
  const json = read.json;
  const parsed = serverFrameSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: relayError('frame_invalid', describe(parsed.error)) };
  return { ok: true, frame: parsed.data };
}
