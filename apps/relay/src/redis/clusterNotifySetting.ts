import type { Cluster } from 'ioredis';
import { readModeReply } from './readModeReply.js';
import { redisFailure, toError } from './redisFailure.js';

/**
 * The primaries of a Redis Cluster (`host:port`, sorted) whose `notify-keyspace-events` lacks K
 * or t, or that refuse CONFIG GET: keyspace events are node-local, so each is asked. Their keys'
 * entries still arrive, by the sweep (every 5 s while one lacks them). A primary out of reach is left out; null when none could be
 * asked (not connected yet).
 */
export async function primariesWithoutNotify(cluster: Cluster, onError: (error: Error) => void): Promise<string[] | null> {
  const primaries = cluster.nodes('master');
  if (cluster.status !== 'ready' || primaries.length === 0) return null;
  const answers = await Promise.all(
    primaries.map(async (node) => {
      const name = `${node.options.host ?? ''}:${node.options.port ?? ''}`;
      try {
        const reply = await node.call('CONFIG', ['GET', 'notify-keyspace-events']);
        return { name, notifies: readModeReply(reply) === 'notify' };
      } catch (thrown) {
        const error = toError(thrown);
        onError(error);
        // A refusal is an answer; a node out of reach is not judged this time.
        return { name, notifies: redisFailure(error).kind === 'reply' ? false : null };
      }
    }),
  );
  if (answers.every((a) => a.notifies === null)) return null;
  return answers
    .filter((a) => a.notifies === false)
    .map((a) => a.name)
    .sort();
}
