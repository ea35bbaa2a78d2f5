import { describe, expect, it } from 'vitest';
import { foldLog, ForeignRecordError, HEADER, recordParts } from './stateRecords.js';
import type { LogMessage, RecordKind } from './stateRecords.js';

/** The messages one record becomes, from sequence `seq` on. */
function record(seq: number, token: number, kind: RecordKind, body: object, partBytes = 1_000, base = 0): LogMessage[] {
  const parts = recordParts(body as never, partBytes);
  return parts.map((data, i) => {
    const headers: Record<string, string> = {
      [HEADER.token]: String(token),
      [HEADER.kind]: kind,
      [HEADER.part]: `${i + 1}/${parts.length}`,
      [HEADER.base]: String(base),
    };
    return { seq: seq + i, header: (name: string) => headers[name], data };
  });
}

describe('foldLog', () => {
  it('applies steps in order, sets before deletes, and remembers the newest step with entries', () => {
    const log = foldLog([
      ...record(1, 1, 'step', { seq: 0 }),
      ...record(2, 1, 'step', { seq: 0, set: { cp: '1', 'b:1': 'h' }, entries: [['s a', '1']] }),
      ...record(3, 2, 'step', { seq: 7, set: { cp: '2', 'b:2': 'h' }, del: ['b:1', 'b:2'] }),
    ]);
    expect(log.state).toEqual(new Map([['cp', '2']]));
    expect(log).toMatchObject({ lastSeq: 3, lastToken: 2, base: 0, records: 3, lastEntries: { seq: 0, entries: [['s a', '1']] } });
  });

  it('counts a record of several parts once all are stored, and skips one whose parts stop short', () => {
    const big = 'é'.repeat(2_000); // multi-byte characters split across parts
    const whole = record(1, 1, 'step', { seq: 0, set: { big }, entries: [['s a', '1']] }, 700);
    expect(whole.length).toBeGreaterThan(3);
    const cut = record(10, 1, 'step', { seq: 5, set: { cp: 'lost' }, entries: [['s b', '2']] }, 10).slice(0, 2);
    const claim = record(20, 2, 'step', { seq: 5 });
    const log = foldLog([...whole, ...cut, ...claim]);
    expect(log.state.get('big')).toBe(big);
    expect(log.state.has('cp')).toBe(false);
    expect(log).toMatchObject({ lastSeq: 20, lastToken: 2, records: 2, lastEntries: { seq: 0, entries: [['s a', '1']] } });
  });

  it('starts over at a complete snapshot, and ignores one cut short', () => {
    const log = foldLog([
      ...record(1, 1, 'step', { seq: 0, set: { old: 'x' }, entries: [['s a', '1']] }),
      ...record(2, 1, 'snapshot', { seq: 3, state: { cp: '9' } }, 5),
    ]);
    expect(log.state).toEqual(new Map([['cp', '9']]));
    expect(log).toMatchObject({ base: 2, records: 0, lastEntries: null });
    const cutSnapshot = record(30, 1, 'snapshot', { seq: 3, state: { cp: 'half' } }, 5).slice(0, 1);
    const after = foldLog([...cutSnapshot, ...record(40, 2, 'step', { seq: 3, set: { n: '1' } }, 1_000, 2)], log);
    expect(after.state).toEqual(
      new Map([
        ['cp', '9'],
        ['n', '1'],
      ]),
    );
    expect(after.base).toBe(2);
  });

  it('refuses a message without ingest headers or with a body that is no record', () => {
    const bare: LogMessage = { seq: 1, header: () => undefined, data: new TextEncoder().encode('{}') };
    expect(() => foldLog([bare])).toThrow(ForeignRecordError);
    const [garbled] = record(1, 1, 'step', { seq: 0 });
    if (garbled === undefined) throw new Error('no message');
    expect(() => foldLog([{ ...garbled, data: new TextEncoder().encode('{"seq":-1}') }])).toThrow(/not an ingest record/);
    expect(() => foldLog([{ ...garbled, data: new TextEncoder().encode('nope') }])).toThrow(/not JSON/);
  });
});
