import type { RedisClient } from '@streamgate/redis';
import type { IncarnationProbe, KeySighting } from './KeySighting.js';
import { parseIncarnationMark, parseInteger } from './parseReplies.js';
import { pipelineByNode } from './pipelineByNode.js';
import { pipelineReply } from './pipelineReply.js';

/**
 * The IncarnationTracker's look at a group of keys: per key, on its node, EXISTS + XRANGE of one
 * entry the reader read (`ids[i]`: its position, or the witness of a suspected loss) + XINFO
 * STREAM, the XRANGE before the XINFO (IncarnationTracker's CursorLook). A key whose XINFO reply
 * is an error (it holds another type: the reader reports that; or it was deleted between the
 * two) is not judged this time round; nor is any while the command connection is down.
 */
export function redisIncarnationProbe(command: () => RedisClient, onError: (error: Error) => void): IncarnationProbe {
  return async (keys, ids) => {
    const connection = command();
    // While Redis is away the checks would only queue up behind the reconnect; the next round looks.
    if (connection.status !== 'ready') return keys.map(() => null);
    const calls = keys.flatMap((key, i) => {
      const id = ids[i] ?? '0-0';
      return [
        { key, command: 'EXISTS', args: [key] },
        // Only whether the entry is there matters: as bytes, its fields are never decoded to text.
        { key, command: 'XRANGE', args: [key, id, id, 'COUNT', 1], buffer: true },
        { key, command: 'XINFO', args: ['STREAM', key] },
      ];
    });
    const replies = await pipelineByNode(connection, calls, onError);
    return keys.map((_, i): KeySighting | null => {
      const exists = pipelineReply(replies, 3 * i, (r) => parseInteger(r, 'exists') === 1);
      if (!exists.ok) return null;
      if (!exists.value) return { exists: false };
      const stored = pipelineReply(replies, 3 * i + 1, storedOne);
      const mark = pipelineReply(replies, 3 * i + 2, parseIncarnationMark);
      if (!mark.ok) return null;
      return stored.ok ? { exists: true, ...mark.value, cursorStored: stored.value } : { exists: true, ...mark.value };
    });
  };
}

/** An `XRANGE id id COUNT 1` reply: whether it holds the entry (an array of at most one). */
function storedOne(reply: unknown): boolean {
  if (!Array.isArray(reply)) throw new TypeError('XRANGE reply is not an array');
  return reply.length > 0;
}
