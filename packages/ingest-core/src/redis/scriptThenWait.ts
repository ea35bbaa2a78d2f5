import { pipelineWithWait } from '@streamgate/redis';
import type { RedisClient, ReplicaWait, ReplicatedReply } from '@streamgate/redis';

/**
 * Runs the script (its text, as EVAL: pipelineWithWait says why) with `WAIT count timeoutMs`
 * pipelined behind it on the same connection, so WAIT counts the replicas of the node that ran it
 * (the publisher's `waitForReplicas` mechanism). Rejects as ioredis does when the script fails.
 */
export function scriptThenWait(
  client: RedisClient,
  script: string,
  args: readonly [numKeys: number, ...keysThenArgs: (string | number)[]],
  wait: ReplicaWait,
): Promise<ReplicatedReply> {
  return pipelineWithWait(client, (pipeline) => pipeline.eval(script, ...args), wait);
}
