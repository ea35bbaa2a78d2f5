import type { SourceResult } from '../core/StreamSource.js';
import type { PipelineReplies } from './pipelineByNode.js';
import { sourceError, toError } from './redisFailure.js';

/** The one normalisation of a pipelined or transaction reply: its error as a SourceError, or its value parsed. */
export function pipelineReply<T>(replies: PipelineReplies, index: number, parse: (value: unknown) => T): SourceResult<T> {
  const [err, value] = replies[index] ?? [new Error(`no reply ${index} in a transaction`), null];
  if (err !== null) return { ok: false, error: sourceError(err) };
  try {
    return { ok: true, value: parse(value) };
  } catch (thrown) {
    return { ok: false, error: sourceError(toError(thrown)) };
  }
}
