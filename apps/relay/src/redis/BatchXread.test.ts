import { Command } from 'ioredis';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { StreamId, StreamName } from '@streamgate/protocol';
import { BatchXread } from './BatchXread.js';

/** A connection that records what would be written instead of sending it. */
function recorder(): { connection: Redis; written: Array<string | Buffer> } {
  const written: Array<string | Buffer> = [];
  const connection = {
    sendCommand(command: Command) {
      written.push(command.toWritable({}));
      return Promise.resolve(null);
    },
  } as unknown as Redis;
  return { connection, written };
}

const asText = (w: string | Buffer | undefined): string => (Buffer.isBuffer(w) ? w.toString('utf8') : (w ?? ''));

describe('BatchXread', () => {
  it('writes the same bytes as ioredis would for call(XREAD, …), non-ASCII keys included', async () => {
    const keys = ['a', 'chain:1:newHeads', 'é:ü', 'x'.repeat(300)] as StreamName[];
    const ids = ['0-0', '1764501234567-0', '18446744073709551615-18446744073709551615', '5-3'] as StreamId[];
    const xread = new BatchXread(1000, 5000);
    xread.setKeys(keys);
    const { connection, written } = recorder();
    await xread.send(connection, ids);
    const expected = new Command('XREAD', ['COUNT', 1000, 'BLOCK', 5000, 'STREAMS', ...keys, ...ids]);
    expected.stringifyArguments();
    expect(asText(written[0])).toBe(asText(expected.toWritable({})));
  });

  it('keeps the encoded keys until they are set again, and takes fresh ids each read', async () => {
    const xread = new BatchXread(10, 100);
    xread.setKeys(['s1', 's2'] as StreamName[]);
    const { connection, written } = recorder();
    await xread.send(connection, ['1-0', '2-0'] as StreamId[]);
    await xread.send(connection, ['1-1', '2-5'] as StreamId[]);
    expect(asText(written[1])).toContain('$2\r\ns1\r\n$2\r\ns2\r\n$3\r\n1-1\r\n$3\r\n2-5\r\n');
    xread.setKeys(['s2'] as StreamName[]);
    await xread.send(connection, ['2-6'] as StreamId[]);
    expect(asText(written[2])).toBe(
      '*8\r\n$5\r\nXREAD\r\n$5\r\nCOUNT\r\n$2\r\n10\r\n$5\r\nBLOCK\r\n$3\r\n100\r\n$7\r\nSTREAMS\r\n$2\r\ns2\r\n$3\r\n2-6\r\n',
    );
    expect(xread.streams).toEqual(['s2']);
  });

  it('refuses ids that do not match the keys one for one', () => {
    const xread = new BatchXread(10, 100);
    xread.setKeys(['s1', 's2'] as StreamName[]);
    expect(() => xread.send(recorder().connection, ['1-0'] as StreamId[])).toThrow(/1 ids for 2 streams/);
  });
});
