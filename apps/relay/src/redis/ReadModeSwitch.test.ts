import { describe, expect, it } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { LiveReader, ReadMode } from './LiveReader.js';
import { ReadModeSwitch } from './ReadModeSwitch.js';
import type { RequestedReadMode } from './ReadModeSwitch.js';
import { ManualClock } from '@streamgate/protocol/testing';

class RecordingReader implements LiveReader {
  readonly cursors = new Map<StreamName, StreamId>();
  closed = false;
  readonly ready = true;
  readonly connectionCount = 1;
  constructor(
    readonly mode: ReadMode,
    positions: ReadonlyArray<readonly [StreamName, StreamId]>,
  ) {
    for (const [s, id] of positions) this.cursors.set(s, id);
  }
  watch(stream: StreamName, after: StreamId): void {
    this.cursors.set(stream, after);
  }
  unwatch(stream: StreamName): void {
    this.cursors.delete(stream);
  }
  forget(stream: StreamName): void {
    this.cursors.delete(stream);
  }
  cursor(stream: StreamName): StreamId | undefined {
    return this.cursors.get(stream);
  }
  restart(): boolean {
    return true;
  }
  positions(): Array<readonly [StreamName, StreamId]> {
    return [...this.cursors];
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

function modeSwitch(requested: RequestedReadMode, answers: Array<ReadMode | null>, initial?: ReadMode) {
  const clock = new ManualClock();
  const created: RecordingReader[] = [];
  const decisions: Array<[ReadMode, ReadMode | null]> = [];
  const probes: number[] = [];
  const s = new ReadModeSwitch({
    requested,
    probe: () => {
      probes.push(clock.now());
      return Promise.resolve(answers.length > 1 ? (answers.shift() ?? null) : (answers[0] ?? null));
    },
    create: (mode, positions) => {
      const r = new RecordingReader(mode, positions);
      created.push(r);
      return r;
    },
    clock,
    checkIntervalMs: 1_000,
    onMode: (mode, previous) => decisions.push([mode, previous]),
    ...(initial === undefined ? {} : { initial }),
  });
  return { s, clock, created, decisions, probes };
}

describe('ReadModeSwitch', () => {
  it('switches both ways at runtime, handing each reader the positions of the one before', async () => {
    const { s, clock, created, decisions } = modeSwitch('auto', ['notify', 'notify', 'batch', 'notify']);
    await s.firstCheck;
    expect(s.mode).toBe('notify');
    s.reader.watch('a', '0-0');
    s.reader.watch('b', '5-1');
    await clock.advance(1_000);
    expect(s.mode).toBe('notify');
    await clock.advance(1_000);
    expect(s.mode).toBe('batch');
    expect(created.map((r) => r.mode)).toEqual(['batch', 'notify', 'batch']);
    expect(created[1]?.closed).toBe(true);
    expect(created[2]?.positions()).toEqual([
      ['a', '0-0'],
      ['b', '5-1'],
    ]);
    await clock.advance(1_000);
    expect(s.mode).toBe('notify');
    expect(decisions).toEqual([
      ['notify', null],
      ['batch', 'notify'],
      ['notify', 'batch'],
    ]);
    await s.close();
  });

  it('keeps the mode in force while the server cannot be asked, and logs batch once if it never answered', async () => {
    const { s, clock, decisions } = modeSwitch('auto', [null, null, 'notify']);
    expect(await s.firstCheck).toBeNull();
    expect(s.mode).toBe('batch');
    await clock.advance(1_000);
    expect(decisions).toEqual([['batch', null]]);
    await clock.advance(1_000);
    expect(decisions).toEqual([
      ['batch', null],
      ['notify', 'batch'],
    ]);
    await s.close();
  });

  it('never asks the server in batch mode', async () => {
    const { s, clock, probes, decisions } = modeSwitch('batch', ['notify']);
    await clock.advance(5_000);
    expect(probes).toEqual([]);
    expect(decisions).toEqual([['batch', null]]);
    await s.close();
  });

  it('starts with the initial reader it is given (a Redis Cluster: notify), never built twice', async () => {
    const { s, clock, created, decisions } = modeSwitch('notify', [null, 'notify'], 'notify');
    expect(created.map((r) => r.mode)).toEqual(['notify']);
    s.reader.watch('a', '1-0');
    expect(await s.firstCheck).toBeNull();
    await clock.advance(1_000);
    expect(s.mode).toBe('notify');
    expect(created.map((r) => r.mode)).toEqual(['notify']);
    expect(decisions).toEqual([['notify', null]]);
    expect(s.reader.cursor('a')).toBe('1-0');
    await s.close();
  });
});
