import { Redis } from 'ioredis';
import { withDeadline } from './withDeadline.js';

/**
 * Sends one command to the Redis server on 127.0.0.1:`port` over a fresh connection that never
 * retries, and closes it. The cluster harness polls nodes that may be down or restarting: a
 * long-lived client would queue and replay commands, hiding which node answered what.
 */
export async function askRedisNode(port: number, command: string, args: readonly string[] = [], timeoutMs = 2_000): Promise<unknown> {
  const redis = new Redis({
    host: '127.0.0.1',
    port,
    lazyConnect: true,
    connectTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // A refused connection reaches the caller through connect()'s rejection; this listener only
  // keeps ioredis from also printing it as an unhandled 'error' event.
  redis.on('error', () => undefined);
  try {
    return await withDeadline(
      redis.connect().then(() => redis.call(command, [...args])),
      timeoutMs,
      `redis-server on ${port} answers ${command} ${args.join(' ')}`,
    );
  } finally {
    redis.disconnect();
  }
}

/** askRedisNode for commands that answer a bulk string (CLUSTER NODES, INFO). */
export async function askRedisNodeText(port: number, command: string, args: readonly string[] = [], timeoutMs = 2_000): Promise<string> {
  const reply = await askRedisNode(port, command, args, timeoutMs);
  if (typeof reply !== 'string')
    throw new Error(`redis-server on ${port}: ${command} ${args.join(' ')} answered ${typeof reply}, not text`);
  return reply;
}
