import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { guardHandler } from './guardHandler.js';

describe('guardHandler', () => {
  it('hands what a listener throws inside an event handler to onError, so emit (ioredis) never sees it', () => {
    const emitter = new EventEmitter();
    const errors: Error[] = [];
    const seen: string[] = [];
    emitter.on(
      'refresh',
      guardHandler(
        (node: string) => {
          seen.push(node);
          throw new RangeError(`"${node}" is not a cluster node address`);
        },
        (error) => errors.push(error),
      ),
    );
    expect(() => emitter.emit('refresh', '::1:7000')).not.toThrow();
    expect(seen).toEqual(['::1:7000']);
    expect(errors.map((e) => e.name)).toEqual(['RangeError']);
  });
});
