import { waitFor } from '@streamgate/testkit';
import { openSocket, rawText } from './rawSocket.js';

/** A server frame as it came over the wire, whether or not this checkout's schemas know its op. */
export interface WireFrame {
  readonly op: string;
  readonly sid?: string;
  readonly stream?: string;
  readonly id?: string;
  readonly recovery?: string;
  readonly position?: string;
  readonly reason?: string;
  readonly data?: unknown;
}

export interface FrameLog {
  /** Every frame received, in arrival order. */
  readonly frames: WireFrame[];
  send(frame: Record<string, unknown>): void;
  until(done: (frames: readonly WireFrame[]) => boolean, message: string, timeoutMs?: number): Promise<void>;
  close(): void;
}

function text(value: ReadonlyMap<string, unknown>, key: string): { [k: string]: string } {
  const v = value.get(key);
  return typeof v === 'string' ? { [key]: v } : {};
}

function toWireFrame(raw: string): WireFrame {
  const value: unknown = JSON.parse(raw);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`not a frame: ${raw}`);
  const record = new Map<string, unknown>(Object.entries(value));
  const op = record.get('op');
  if (typeof op !== 'string') throw new Error(`frame without op: ${raw}`);
  return {
    op,
    ...text(record, 'sid'),
    ...text(record, 'stream'),
    ...text(record, 'id'),
    ...text(record, 'recovery'),
    ...text(record, 'position'),
    ...text(record, 'reason'),
    ...(record.has('data') ? { data: record.get('data') } : {}),
  };
}

/**
 * A bare protocol socket that keeps every frame in order, including ops the protocol package of
 * this checkout may not parse yet (a test of a new frame must see it where it arrives).
 */
export async function openFrameLog(url: string): Promise<FrameLog> {
  const frames: WireFrame[] = [];
  const ws = await openSocket(url, (socket) => socket.on('message', (data) => frames.push(toWireFrame(rawText(data)))));
  return {
    frames,
    send: (frame) => ws.send(JSON.stringify(frame)),
    until: async (done, message, timeoutMs = 15_000) => {
      await waitFor(() => done(frames), { timeoutMs, message });
    },
    close: () => ws.close(),
  };
}
