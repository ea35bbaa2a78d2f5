import { pipelineWithWait } from '@streamgate/redis';
import type { RedisClient, ReplicaWait, ReplicatedReply } from '@streamgate/redis';

/** A Lua script's text, sent whole with every call (see scriptThenWait). */
export type LuaScript = { readonly text: string };

export const luaScript = (text: string): LuaScript => ({ text });

/**
 * Runs the script with `WAIT count timeoutMs` pipelined behind it on the same connection, so WAIT
 * counts the replicas of the node that ran it (pipelineWithWait, the publisher's
 * `waitForReplicas` mechanism). Rejects as ioredis does when the script fails.
 * EVAL, never EVALSHA with a fallback: on a node that does not know the script (a fresh or
 * failed-over primary, just when this matters) NOSCRIPT still runs the pipelined WAIT, which then
 * blocks the connection for its whole timeout with nothing written, and the retry waits again.
 */
export function scriptThenWait(
  client: RedisClient,
  script: LuaScript,
  args: readonly [numKeys: number, ...keysThenArgs: (string | number)[]],
  wait: ReplicaWait,
): Promise<ReplicatedReply> {
  return pipelineWithWait(client, (pipeline) => pipeline.eval(script.text, ...args), wait);
}
