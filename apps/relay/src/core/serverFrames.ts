import { MAX_ENTRY_DATA_BYTES, PROTOCOL_VERSION, decodeEntryFields } from '@streamgate/protocol';
import type {
  ErrorCode,
  ErrorFrame,
  EventFrame,
  LiveFrame,
  MalformedFrame,
  PongFrame,
  ReconnectFrame,
  Recovery,
  RefreshedFrame,
  RefreshTokenFrame,
  ServerPingFrame,
  StreamId,
  StreamName,
  StreamResetFrame,
  SubscribedFrame,
  UnsubscribedFrame,
  WelcomeFrame,
} from '@streamgate/protocol';
import { oversizeEntry } from './oversizeEntry.js';
import type { StreamEntry } from './StreamSource.js';

// Every frame the relay sends is built here, each checked against its protocol type, so that the
// wire and packages/protocol cannot drift apart one hand-written object at a time.

export function welcomeFrameText(node: string, limits: WelcomeFrame['limits'], pingIntervalMs?: number): string {
  const frame: WelcomeFrame = { op: 'welcome', protocol: PROTOCOL_VERSION, node, limits };
  if (pingIntervalMs !== undefined) frame.pingIntervalMs = pingIntervalMs;
  return JSON.stringify(frame);
}

/** The relay's liveness check; the same text for every socket. */
export const PING_FRAME_TEXT = JSON.stringify({ op: 'ping' } satisfies ServerPingFrame);

export function subscribedFrameText(sid: string, stream: StreamName, recovery: Recovery, position: StreamId, exp: number): string {
  return JSON.stringify({ op: 'subscribed', sid, stream, recovery, position, exp } satisfies SubscribedFrame);
}

export function liveFrameText(sid: string, position: StreamId): string {
  return JSON.stringify({ op: 'live', sid, position } satisfies LiveFrame);
}

export function errorFrameText(code: ErrorCode, retryable: boolean, message: string, sid?: string): string {
  const frame: ErrorFrame = sid === undefined ? { op: 'error', code, retryable, message } : { op: 'error', sid, code, retryable, message };
  return JSON.stringify(frame);
}

export function unsubscribedFrameText(sid: string, reason: UnsubscribedFrame['reason']): string {
  return JSON.stringify({ op: 'unsubscribed', sid, reason } satisfies UnsubscribedFrame);
}

export function refreshTokenFrameText(sid: string, exp: number): string {
  return JSON.stringify({ op: 'refresh_token', sid, exp } satisfies RefreshTokenFrame);
}

export function refreshedFrameText(sid: string, exp: number): string {
  return JSON.stringify({ op: 'refreshed', sid, exp } satisfies RefreshedFrame);
}

export function reconnectFrameText(positions: ReconnectFrame['positions'], sinceDrainMs: number, dueMs: number): string {
  return JSON.stringify({ op: 'reconnect', reason: 'drain', positions, sinceDrainMs, dueMs } satisfies ReconnectFrame);
}

const PONG_TEXT = JSON.stringify({ op: 'pong' } satisfies PongFrame);

export function pongFrameText(t: number | undefined): string {
  return t === undefined ? PONG_TEXT : JSON.stringify({ op: 'pong', t } satisfies PongFrame);
}

/**
 * A pong whose `t` is the JSON number text the client sent, verbatim (the session takes it from
 * the frame it already parsed, so it is a valid JSON number): a parsed and re-serialized double
 * would not always come back as written.
 */
export function pongEchoFrameText(tJson: string): string {
  return `{"op":"pong","t":${tJson}}`;
}

/** The keys of the event frame text below, checked against EventFrame at compile time. */
type EventTextKeys = 'op' | 'stream' | 'id' | 'data';
const eventTextMatchesType: [EventTextKeys, keyof EventFrame] extends [keyof EventFrame, EventTextKeys] ? true : never = true;
void eventTextMatchesType;

/**
 * The frames of one stream's entries. Each entry is serialized once for every subscriber on the
 * pod, and its stored `data` JSON is spliced in as is, never parsed and re-serialized: stream names
 * and ids come from a safe character set, so only the stream name needs escaping, once per stream.
 */
export class StreamFrames {
  private readonly streamJson: string;

  /** `maxEntryBytes`: a larger `data` value is sent as `malformed` (oversizeEntry). */
  constructor(
    readonly stream: StreamName,
    private readonly maxEntryBytes: number = MAX_ENTRY_DATA_BYTES,
  ) {
    this.streamJson = JSON.stringify(stream);
  }

  /** `event` for an entry in the entry format, `malformed` (and `malformed: true`) otherwise. */
  entry(entry: StreamEntry): { text: string; malformed: boolean } {
    if (entry.malformed !== undefined) return { text: this.malformed(entry.id, entry.malformed), malformed: true };
    const oversize = oversizeEntry(entry.fields, this.maxEntryBytes);
    if (oversize !== null) return { text: this.malformed(entry.id, oversize), malformed: true };
    const decoded = decodeEntryFields(entry.fields);
    if (decoded.ok) {
      return { text: `{"op":"event","stream":${this.streamJson},"id":"${entry.id}","data":${decoded.json}}`, malformed: false };
    }
    return { text: this.malformed(entry.id, decoded.reason), malformed: true };
  }

  /** The stream was recreated: every entry of its new incarnation follows `position`. */
  reset(position: StreamId): string {
    return JSON.stringify({ op: 'stream_reset', stream: this.stream, position } satisfies StreamResetFrame);
  }

  private malformed(id: StreamId, reason: string): string {
    return JSON.stringify({ op: 'malformed', stream: this.stream, id, reason } satisfies MalformedFrame);
  }
}
