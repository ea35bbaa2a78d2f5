import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';

/** What a client does with the frames of one connection; every server protocol implements it. */
export interface FrameSink {
  /** A text frame, as a slice of `buf` (valid only during the call); `now` is the read's time, ms since the epoch. */
  text(buf: Buffer, start: number, end: number, now: number): void;
  opened(): void;
  closed(): void;
}

const HEADER_END = Buffer.from('\r\n\r\n');

/**
 * A WebSocket client over a bare TCP socket, as small as the benchmark allows: it frames and
 * unframes text and answers pings, nothing else (no extensions, no fragmentation, a zero mask).
 * The same client talks to every server under test, so the client's cost per message is the same
 * for all of them and much lower than the `ws` package's (no event per message, no copies).
 */
export class RawWsClient {
  private socket: Socket | null = null;
  private rest: Buffer | null = null;
  private upgraded = false;
  open = false;

  constructor(
    public port: number,
    private readonly path: string,
    private readonly sink: FrameSink,
  ) {}

  connect(): void {
    const socket = connect({ host: '127.0.0.1', port: this.port, noDelay: true });
    this.socket = socket;
    this.upgraded = false;
    this.rest = null;
    socket.on('connect', () => {
      const key = randomBytes(16).toString('base64');
      socket.write(
        `GET ${this.path} HTTP/1.1\r\nHost: 127.0.0.1:${this.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    // Errors end in `close`, which is where the sink hears about it.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.socket !== socket) return;
      this.socket = null;
      this.open = false;
      this.sink.closed();
    });
  }

  sendText(text: string): void {
    this.socket?.write(maskedFrame(0x1, Buffer.from(text, 'utf8')));
  }

  close(): void {
    this.socket?.destroy();
  }

  private onData(chunk: Buffer): void {
    const buf = this.rest === null ? chunk : Buffer.concat([this.rest, chunk]);
    let off = 0;
    if (!this.upgraded) {
      const headerEnd = buf.indexOf(HEADER_END);
      if (headerEnd < 0) {
        this.rest = buf;
        return;
      }
      if (!buf.toString('latin1', 0, 12).startsWith('HTTP/1.1 101')) {
        this.socket?.destroy();
        return;
      }
      this.upgraded = true;
      this.open = true;
      off = headerEnd + 4;
      this.sink.opened();
    }
    const now = performance.timeOrigin + performance.now();
    const length = buf.length;
    while (length - off >= 2) {
      const b0 = buf[off] as number;
      let len = (buf[off + 1] as number) & 0x7f;
      let header = 2;
      if (len === 126) {
        if (length - off < 4) break;
        len = buf.readUInt16BE(off + 2);
        header = 4;
      } else if (len === 127) {
        if (length - off < 10) break;
        len = Number(buf.readBigUInt64BE(off + 2));
        header = 10;
      }
      const start = off + header;
      const end = start + len;
      if (end > length) break;
      const opcode = b0 & 0x0f;
      if (opcode === 0x1 || opcode === 0x0) this.sink.text(buf, start, end, now);
      else if (opcode === 0x9) this.socket?.write(maskedFrame(0xa, buf.subarray(start, end)));
      else if (opcode === 0x8) {
        this.socket?.end();
        return;
      }
      off = end;
    }
    this.rest = off < length ? buf.subarray(off) : null;
  }
}

/** A client frame with an all-zero mask: valid, and the payload needs no XOR. */
function maskedFrame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const header = len < 126 ? 2 : len < 65_536 ? 4 : 10;
  const frame = Buffer.alloc(header + 4 + len);
  frame[0] = 0x80 | opcode;
  if (header === 2) frame[1] = 0x80 | len;
  else if (header === 4) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(len, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeBigUInt64BE(BigInt(len), 2);
  }
  payload.copy(frame, header + 4);
  return frame;
}
