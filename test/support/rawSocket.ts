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

export async function openRawSocket(url: string): Promise<RawSocket> {
  const ws = new WebSocket(url);
  const frames: ServerFrame[] = [];
  const unparsed: string[] = [];
  const waiters: Array<{ match: (f: ServerFrame) => boolean; resolve: (f: ServerFrame) => void }> = [];
  ws.on('message', (data) => {
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
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await withDeadline(
    new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    }),
    10_000,
    `could not open ${url}`,
  );
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
