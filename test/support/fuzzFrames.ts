/**
 * Seeded generator of hostile client frames: mutations of valid subscribe / unsubscribe /
 * refresh / ping frames plus plain garbage. Same seed, same frames, so a failure reproduces.
 */

export { prng } from '@streamgate/testkit';

export type FuzzFrame = { kind: 'text'; text: string } | { kind: 'binary'; bytes: Buffer };

export interface FuzzContext {
  /** Valid tokens (different streams) the mutations start from. */
  readonly tokens: readonly string[];
  /** A valid stream id to use as `from`. */
  readonly from: string;
  /** The relay's maxFrameBytes: some frames are padded past it. */
  readonly maxFrameBytes: number;
}

const UNICODE = ['é', '𝄞', '\u0000', '\ud800', '\udfff', '\u202e', '\ufeff', '💥', '\u2028', 'ǅ', '\u{10ffff}'];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];
const HUGE = [1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, -0, 2 ** 64, 5e-324];
const HUGE_TEXT = ['1e400', '-1e400', '123456789012345678901234567890123456789', '1' + '0'.repeat(400), '0.' + '0'.repeat(300) + '1'];

export class FrameFuzzer {
  private sidCounter = 0;
  private readonly usedSids: string[] = [];

  constructor(
    private readonly random: () => number,
    private readonly ctx: FuzzContext,
  ) {}

  /**
   * The next frame, always under the transport's hard cut (4 × maxFrameBytes): a larger one
   * makes uWS drop the socket, which fuzz.test.ts checks on sockets of their own.
   */
  next(): FuzzFrame {
    for (;;) {
      const frame = this.candidate();
      const size = frame.kind === 'binary' ? frame.bytes.length : Buffer.byteLength(frame.text);
      if (size <= this.ctx.maxFrameBytes * 4) return frame;
    }
  }

  private candidate(): FuzzFrame {
    const r = this.random();
    if (r < 0.04) return { kind: 'binary', bytes: this.bytes(this.int(0, 256)) };
    if (r < 0.1) return { kind: 'text', text: this.garbage() };
    const base = this.base();
    if (r < 0.25) return { kind: 'text', text: JSON.stringify(base) };
    return { kind: 'text', text: this.mutate(base) };
  }

  private int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min));
  }

  private pick<T>(items: readonly T[]): T {
    const item = items[this.int(0, items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }

  private bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.int(0, 256);
    return out;
  }

  private sid(): string {
    // Mostly sids this socket used before, so unsubscribe and refresh reach live subscriptions.
    if (this.usedSids.length > 0 && this.random() < 0.5) return this.pick(this.usedSids);
    const sid = `s${this.sidCounter++}`;
    this.usedSids.push(sid);
    return sid;
  }

  private base(): Record<string, unknown> {
    switch (this.int(0, 4)) {
      case 0: {
        const frame: Record<string, unknown> = { op: 'subscribe', sid: this.sid(), token: this.pick(this.ctx.tokens) };
        if (this.random() < 0.4) frame.from = this.random() < 0.5 ? this.ctx.from : '0-0';
        return frame;
      }
      case 1:
        return { op: 'unsubscribe', sid: this.sid() };
      case 2:
        return { op: 'refresh', sid: this.sid(), token: this.pick(this.ctx.tokens) };
      default:
        return this.random() < 0.2 ? { op: 'ping' } : { op: 'ping', t: this.random() * 1e13 };
    }
  }

  private garbage(): string {
    switch (this.int(0, 6)) {
      case 0:
        return this.bytes(this.int(1, 200)).toString('latin1');
      case 1:
        return this.pick([
          '',
          ' ',
          'null',
          'true',
          '[]',
          '{}',
          '"op"',
          '0',
          '[{"op":"ping"}]',
          '{"op":null}',
          '{"op":"PING"}',
          '{"op":"ping"',
        ]);
      case 2:
        return this.nested(this.int(1, 5_000));
      case 3:
        return JSON.stringify({ op: this.pick(['subscribe ', 'Subscribe', 'pong', 'welcome', 'event', 'sub', '', 'unsubscribe\u0000']) });
      case 4:
        return `{"op":"ping","t":${this.pick(HUGE_TEXT)}}`;
      default:
        return '{"op":"ping",'.repeat(this.int(1, 50));
    }
  }

  private nested(depth: number): string {
    return this.random() < 0.5 ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  }

  private value(): unknown {
    switch (this.int(0, 9)) {
      case 0:
        return null;
      case 1:
        return this.random() < 0.5;
      case 2:
        return this.pick(HUGE);
      case 3:
        return [];
      case 4:
        return { op: 'ping' };
      case 5:
        return this.pick(UNICODE).repeat(this.int(1, 20));
      case 6:
        return '';
      case 7:
        return 'x'.repeat(this.int(60, 300));
      default:
        return this.int(-10, 10);
    }
  }

  private mutate(frame: Record<string, unknown>): string {
    const keys = Object.keys(frame);
    switch (this.int(0, 10)) {
      case 0: {
        // Bit flips on the encoded bytes; decoded leniently so the frame stays valid UTF-8 text
        // (invalid UTF-8 is cut by the WebSocket layer; fuzz.test.ts covers that separately).
        const bytes = Buffer.from(JSON.stringify(frame));
        for (let i = this.int(1, 4); i > 0; i--) {
          const at = this.int(0, bytes.length);
          bytes[at] = (bytes[at] ?? 0) ^ (1 << this.int(0, 8));
        }
        return bytes.toString('utf8');
      }
      case 1: {
        const text = JSON.stringify(frame);
        return text.slice(0, this.int(0, text.length));
      }
      case 2:
        return JSON.stringify({ ...frame, [this.pick(keys)]: this.value() });
      case 3:
        return JSON.stringify({ ...frame, [this.pick(keys)]: undefined });
      case 4:
        return JSON.stringify(frame).replace(/}$/, `,"${this.pick(PROTO_KEYS)}":${JSON.stringify(this.value())}}`);
      case 5:
        // A nested value deep enough to hurt a recursive validator.
        return JSON.stringify(frame).replace(/}$/, `,"${this.pick(keys)}":${this.nested(this.int(100, 3_000))}}`);
      case 6:
        // Past maxFrameBytes but under the transport's hard cut.
        return JSON.stringify({ ...frame, pad: 'p'.repeat(this.ctx.maxFrameBytes + this.int(1, 2_000)) });
      case 7:
        return JSON.stringify({
          ...frame,
          [this.pick(keys)]: this.pick(UNICODE) + JSON.stringify(frame[this.pick(keys)] ?? '') + this.pick(UNICODE),
        });
      case 8:
        // Duplicate keys: JSON.parse keeps the last one.
        return JSON.stringify(frame).replace(/^{/, `{"op":"${this.pick(['ping', 'subscribe', 'refresh', 'nope'])}",`);
      default:
        return `{"op":"ping","t":${this.pick(HUGE_TEXT)}}`;
    }
  }
}
