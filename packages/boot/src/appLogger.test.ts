import { Writable } from 'node:stream';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { maskCommandSecrets, serializeError } from './appLogger.js';

/** An ioredis ReplyError as it arrives on a refused connection: the command rides on the error. */
function refusedHello(): Error {
  return Object.assign(new Error('WRONGPASS invalid username-password pair or user is disabled.'), {
    command: { name: 'hello', args: ['3', 'AUTH', 'default', 's3cret-pw', 'SETNAME', 'relay'] },
  });
}

describe('appLogger', () => {
  it('never writes a Redis password that rides on an error', () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const log = pino({ serializers: { err: serializeError } }, sink);
    log.warn({ err: refusedHello() }, 'redis error');
    log.warn({ err: Object.assign(new Error('x'), { command: { name: 'auth', args: ['admin', 'hunter2'] } }) }, 'redis error');
    const text = lines.join('');
    expect(text).not.toContain('s3cret-pw');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('WRONGPASS');
    expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({
      err: { command: { name: 'hello', args: ['3', 'AUTH', '<not shown>', '<not shown>', 'SETNAME', 'relay'] } },
    });
  });

  it('leaves other commands as they are, and masks nested ones', () => {
    expect(maskCommandSecrets({ name: 'xread', args: ['COUNT', '10', 'STREAMS', 'a', '0-0'] })).toEqual({
      name: 'xread',
      args: ['COUNT', '10', 'STREAMS', 'a', '0-0'],
    });
    expect(maskCommandSecrets({ previousErrors: [{ command: { name: 'AUTH', args: ['pw'] } }] })).toEqual({
      previousErrors: [{ command: { name: 'AUTH', args: ['<not shown>'] } }],
    });
    expect(maskCommandSecrets({ name: 'migrate', args: ['h', '1', '', '0', '5', 'AUTH2', 'u', 'p', 'KEYS', 'k'] })).toEqual({
      name: 'migrate',
      args: ['h', '1', '', '0', '5', 'AUTH2', '<not shown>', '<not shown>', 'KEYS', 'k'],
    });
  });
});
