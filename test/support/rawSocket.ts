import WebSocket from 'ws';
import { parseServerFrame } from '@streamgate/protocol';
import type { ServerFrame } from '@streamgate/protocol';
import { withDeadline } from '@streamgate/testkit';

/** A bare protocol socket: sends raw text, collects parsed server frames, for refusal tests. */
export interface RawSocket {
  readonly frames: ServerFrame[];
  readonly unparsed: string[];
  readonly closed: Promise<{ code: number; reason: string }>;
  send(text: string | Buffer): void;
  next(match: (frame: ServerFrame) => boolean, timeoutMs?: number): Promise<ServerFrame>;
  close(): void;
}

/** The text of a `ws` message, whichever of its three shapes it arrived in. */
export function rawText(data: WebSocket.RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  return Buffer.concat(Array.isArray(data) ? data : [Buffer.from(data)]).toString('utf8');
}

/**
 * Opens a socket, or fails within 10 s. `listen` attaches the handlers before the socket can
 * emit anything, so no early frame or close is missed.
 */
export async function openSocket(url: string, listen: (ws: WebSocket) => void): Promise<WebSocket> {
  const ws = new WebSocket(url);
  listen(ws);
  await withDeadline(
    new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    10_000,
    `could not open ${url}`,
  );
  return ws;
}

export async function openRawSocket(url: string): Promise<RawSocket> {
  const frames: ServerFrame[] = [];
  const unparsed: string[] = [];
  const waiters: Array<{ match: (f: ServerFrame) => boolean; resolve: (f: ServerFrame) => void }> = [];
  const onMessage = (data: WebSocket.RawData): void => {
    const text = rawText(data);
    const parsed = parseServerFrame(text);
    if (!parsed.ok) {
      unparsed.push(text);
      return;
    }
    frames.push(parsed.frame);
    for (let i = waiters.length - 1; i >= 0; i--) {
      const w = waiters[i];
      if (w !== undefined && w.match(parsed.frame)) {
        waiters.splice(i, 1);
        w.resolve(parsed.frame);
      }
    }
  };
  let onClose: (closed: { code: number; reason: string }) => void = () => undefined;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (onClose = resolve));
  const ws = await openSocket(url, (socket) => {
    socket.on('message', onMessage);
    socket.on('close', (code, reason) => onClose({ code, reason: String(reason) }));
  });
  return {
    frames,
    unparsed,
    closed,
    send: (text) => ws.send(text),
    next: (match, timeoutMs = 10_000) => {
      const found = frames.find(match);
      if (found !== undefined) return Promise.resolve(found);
      return withDeadline(new Promise<ServerFrame>((resolve) => waiters.push({ match, resolve })), timeoutMs, 'expected frame never came');
    },
    close: () => ws.close(),
  };
}
