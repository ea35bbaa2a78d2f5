import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { FaultPolicy } from './FaultPolicy.js';
import type { FaultKind } from './FaultPolicy.js';

function harness() {
  const target = new EventEmitter();
  const lines: Array<{ level: 'fatal' | 'error'; fields: object; message: string }> = [];
  const exits: number[] = [];
  const counted: FaultKind[] = [];
  const policy = new FaultPolicy({
    app: 'test',
    log: {
      fatal: (fields, message) => lines.push({ level: 'fatal', fields, message }),
      error: (fields, message) => lines.push({ level: 'error', fields, message }),
    },
    exit: (code) => exits.push(code),
    target,
  }).install();
  policy.countWith((kind) => counted.push(kind));
  const emit = (event: string, value: unknown): boolean => target.emit(event, value);
  return { policy, lines, exits, counted, emit };
}

describe('FaultPolicy', () => {
  it('logs the fault with its kind and error, counts it and exits 70', () => {
    const h = harness();
    const error = new Error('boom');
    h.emit('unhandledRejection', error);
    expect(h.counted).toEqual(['unhandledRejection']);
    expect(h.exits).toEqual([70]);
    expect(h.lines[0]).toMatchObject({ level: 'fatal', fields: { kind: 'unhandledRejection', err: error, exitCode: 70 } });
    expect(h.lines[0]?.message).toMatch(/^unhandledRejection: test exits with 70/);
  });

  it('logs a rejection that is not an Error as its text', () => {
    const h = harness();
    h.emit('uncaughtException', 'just a string');
    expect(h.lines[0]?.fields).toMatchObject({ kind: 'uncaughtException', reason: 'just a string' });
  });

  it('runs the shutdown first, then exits; later faults are logged and counted, and change nothing', async () => {
    const h = harness();
    let release = (): void => undefined;
    h.policy.shutdownWith(() => new Promise<void>((resolve) => (release = resolve)), 10_000);
    h.emit('uncaughtException', new Error('first'));
    h.emit('unhandledRejection', new Error('second'));
    expect(h.exits).toEqual([]);
    expect(h.counted).toEqual(['uncaughtException', 'unhandledRejection']);
    expect(h.lines.map((l) => l.level)).toEqual(['fatal', 'error']);
    // The shutdown starts on a microtask: wait until it holds its promise, then let it finish.
    const original = release;
    await waitFor(() => release !== original, { timeoutMs: 1_000, message: 'shutdown started' });
    expect(h.exits).toEqual([]);
    release();
    await waitFor(() => h.exits.length > 0, { timeoutMs: 2_000, message: 'exit after the shutdown' });
    expect(h.exits).toEqual([70]);
  });

  it('exits at the budget when the shutdown hangs', async () => {
    const h = harness();
    h.policy.shutdownWith(() => new Promise<void>(() => undefined), 50);
    h.emit('unhandledRejection', new Error('stuck'));
    await waitFor(() => h.exits.length > 0, { timeoutMs: 2_000, message: 'exit at the budget' });
    expect(h.exits).toEqual([70]);
    expect(h.lines.at(-1)?.message).toBe('shutdown after a fault ran out of time');
  });
});
