import { parseClientFrame, relayError } from '@streamgate/protocol';
import type { ClientFrame, RelayError } from '@streamgate/protocol';

/**
 * One text frame as the session must treat it:
 * - `frame`: a usable frame;
 * - `too_large`: over the frame limit, not parsed at all;
 * - `unauthorized`: a well-formed frame without its token, a refusal of authorization rather than
 *   garbage (it ends a run of unusable frames);
 * - `unusable`: anything else the relay cannot use.
 */
export type FrameReading =
  | { readonly kind: 'frame'; readonly frame: ClientFrame }
  | { readonly kind: 'too_large'; readonly error: RelayError }
  | { readonly kind: 'unauthorized'; readonly error: RelayError; readonly sid?: string }
  | { readonly kind: 'unusable'; readonly error: RelayError; readonly sid?: string };

export function readClientFrame(text: string, byteLength: number, maxFrameBytes: number): FrameReading {
  if (byteLength > maxFrameBytes) {
    return {
      kind: 'too_large',
      error: relayError('frame_too_large', `frame of ${byteLength} bytes exceeds the limit of ${maxFrameBytes}`),
    };
  }
  const parsed = parseClientFrame(text);
  if (parsed.ok) return { kind: 'frame', frame: parsed.frame };
  const kind = parsed.error.code === 'token_missing' ? 'unauthorized' : 'unusable';
  return { kind, error: parsed.error, sid: parsed.sid };
}
