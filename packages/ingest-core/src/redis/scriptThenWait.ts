import { createHash } from 'node:crypto';
import { pipelineWithWait } from '@streamgate/redis';
import type { RedisClient, ReplicaWait, ReplicatedReply } from '@streamgate/redis';

/** A Lua script with its digest, for EVALSHA first and EVAL when the server does not know it. */
export type LuaScript = { readonly text: string; readonly sha: string };

export const luaScript = (text: string): LuaScript => ({ text, sha: createHash('sha1').update(text).digest('hex') });

/**
 * Runs the script (EVALSHA, EVAL on NOSCRIPT) with `WAIT count timeoutMs` pipelined behind it on
 * the same connection, so WAIT counts the replicas of the node that ran it (pipelineWithWait, the
 * publisher's `waitForReplicas` mechanism). Rejects as ioredis does when the script fails.
 */
export function scriptThenWait(
  client: RedisClient,
  script: LuaScript,
  args: readonly [numKeys: number, ...keysThenArgs: (string | number)[]],
  wait: ReplicaWait,
): Promise<ReplicatedReply> {
  return pipelineWithWait(
    client,
    (pipeline, useEval) => {
      if (useEval) pipeline.eval(script.text, ...args);
      else pipeline.evalsha(script.sha, ...args);
    },
    wait,
    { scriptFallback: true },
  );
}
