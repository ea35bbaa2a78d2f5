import { createHash } from 'node:crypto';
import type { Cluster } from 'ioredis';
import type { RedisClient } from '@streamgate/redis';

/** A Lua script with its digest, for EVALSHA first and EVAL when the server does not know it. */
export type LuaScript = { readonly text: string; readonly sha: string };

export const luaScript = (text: string): LuaScript => ({ text, sha: createHash('sha1').update(text).digest('hex') });

/** `replicas`: how many replicas WAIT counted (0 when WAIT itself failed; `waitError` says why). */
export type ScriptThenWaitReply = { reply: unknown; replicas: number; waitError?: string };

// The approach of @streamgate/server's writeEntry (publisher `waitForReplicas`): a MOVED or ASK
// answer inside a pipeline is handed back, not followed, and means the script did not run; retry
// up to this many more times, each after the slot map is read again.
const MAX_REDIRECTED_ATTEMPTS = 2;

const isReplyError = (error: Error, pattern: RegExp): boolean => error.name === 'ReplyError' && pattern.test(error.message);

function refreshSlots(client: RedisClient): Promise<void> {
  if (!client.isCluster) return Promise.resolve();
  return new Promise((resolve) => (client as Cluster).refreshSlotsCache(() => resolve()));
}

/**
 * Runs the script and pipelines `WAIT count timeoutMs` right behind it. Pipelined, the two leave
 * on the same connection: on a Cluster ioredis sends a pipeline to the node of its keyed command's
 * slot and the keyless WAIT rides along, so it counts the replicas of the node that ran the
 * script. WAIT measures this connection's own writes, which is why it cannot be sent on its own.
 * Rejects as ioredis does when the script fails.
 */
export async function scriptThenWait(
  client: RedisClient,
  script: LuaScript,
  args: readonly [numKeys: number, ...keysThenArgs: (string | number)[]],
  wait: { count: number; timeoutMs: number },
): Promise<ScriptThenWaitReply> {
  let useEval = false;
  for (let attempt = 0; ; attempt += 1) {
    const pipeline = client.pipeline();
    if (useEval) pipeline.eval(script.text, ...args);
    else pipeline.evalsha(script.sha, ...args);
    pipeline.wait(wait.count, wait.timeoutMs);
    const results = (await pipeline.exec()) ?? [];
    const [scriptError, reply] = results[0] ?? [new Error('the pipeline returned no reply for the script'), null];
    const [waitError, waitReply] = results[1] ?? [new Error('the pipeline returned no reply for WAIT'), null];
    if (scriptError !== null) {
      // NOSCRIPT: the server ran nothing (first use, or a restart emptied its script cache).
      if (!useEval && isReplyError(scriptError, /^NOSCRIPT/)) {
        useEval = true;
        continue;
      }
      if (isReplyError(scriptError, /^(MOVED|ASK) /) && attempt < MAX_REDIRECTED_ATTEMPTS) {
        await refreshSlots(client);
        continue;
      }
      throw scriptError;
    }
    if (waitError !== null) return { reply, replicas: 0, waitError: waitError.message };
    return { reply, replicas: typeof waitReply === 'number' ? waitReply : 0 };
  }
}
