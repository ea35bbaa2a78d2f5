import type { RedisSourceOptions } from '../RedisStreamSource.js';

/**
 * A RedisStreamSource's options for a test server: no credentials, reads of 100 blocking 10 s,
 * and a listener and hooks that ignore everything; a test names only what it watches.
 */
export function testSourceOptions(target: string, connectionName: string, given: Partial<RedisSourceOptions> = {}): RedisSourceOptions {
  return {
    target,
    username: undefined,
    password: undefined,
    blockMs: 10_000,
    readCount: 100,
    maxStreamsPerReader: 1_000,
    connectionName,
    listener: { entries: () => undefined, failed: () => undefined, reset: () => undefined },
    onError: () => undefined,
    onRead: () => undefined,
    ...given,
  };
}
