import type { StreamName } from '@streamgate/protocol';
import { isClusterClient, keySlot } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import type { IncarnationProbe, KeySighting } from './KeySighting.js';
import { parseIncarnationSightings } from './parseReplies.js';
import { pipelineByNode } from './pipelineByNode.js';
import type { KeyedCall } from './pipelineByNode.js';
import { redisFailure, toError } from './redisFailure.js';

/**
 * Per key (KEYS[i], with ARGV[i] the entry the reader read): 0 when missing, -1 when it holds
 * another type (the reader reports that; it is not judged here), else
 * `{ cursorStored (0|1), last-generated-id, entries-added, first entry's id, max-deleted-entry-id, length }`,
 * nil where the server does not say (before Redis 7; an empty stream has no first entry). One
 * script, so the XRANGE and the XINFO see the same state: CursorLook's order holds trivially.
 * Only these few fields come back: the XINFO's entries and the XRANGE's fields stay in Redis.
 */
const INCARNATION_PROBE_LUA = `
local out = {}
for i, key in ipairs(KEYS) do
  local kind = redis.call('TYPE', key).ok
  if kind == 'none' then
    out[i] = 0
  elseif kind ~= 'stream' then
    out[i] = -1
  else
    local stored = #redis.call('XRANGE', key, ARGV[i], ARGV[i], 'COUNT', 1)
    local info = redis.call('XINFO', 'STREAM', key)
    local last, added, first, maxdel, len = false, false, false, false, false
    for j = 1, #info, 2 do
      local name = info[j]
      if name == 'last-generated-id' then last = info[j + 1]
      elseif name == 'length' then len = info[j + 1]
      elseif name == 'entries-added' then added = info[j + 1]
      elseif name == 'max-deleted-entry-id' then maxdel = info[j + 1]
      elseif name == 'first-entry' and info[j + 1] then first = info[j + 1][1]
      end
    end
    out[i] = { stored, last, added, first, maxdel, len }
  end
end
return out
`;

/** Keys per script: bounds the time one script holds Redis (about 12 µs a key: 0.3 ms for 25). */
const KEYS_PER_SCRIPT = 25;

/**
 * The IncarnationTracker's look at a group of keys, one script per group of keys that may share
 * it: on one instance up to KEYS_PER_SCRIPT keys, on a Redis Cluster the keys of one slot (a
 * script touches one slot). The scripts go out as one pipeline per node. A group whose script
 * fails (a node down, a slot moving) leaves its keys unjudged this time round, and is told to
 * onError; so is every key while the command connection is down.
 */
export function redisIncarnationProbe(command: () => RedisClient, onError: (error: Error) => void): IncarnationProbe {
  return async (keys, ids) => {
    const connection = command();
    // While Redis is away the checks would only queue up behind the reconnect; the next round looks.
    const sightings: Array<KeySighting | null> = keys.map(() => null);
    if (connection.status !== 'ready') return sightings;
    const groups = scriptGroups(keys, isClusterClient(connection));
    const calls = groups.map((group): KeyedCall => ({
      key: keys[group[0] ?? 0] ?? '',
      command: 'EVAL',
      args: [INCARNATION_PROBE_LUA, group.length, ...group.map((i) => keys[i] ?? ''), ...group.map((i) => ids[i] ?? '0-0')],
    }));
    const replies = await pipelineByNode(connection, calls, onError);
    groups.forEach((group, g) => {
      const [error, reply] = replies[g] ?? [new Error(`no reply ${g} in a pipeline`), null];
      // A node's failed pipeline was told to onError by pipelineByNode already; a script's own error was not.
      if (error !== null) {
        if (redisFailure(error).kind === 'reply') onError(error);
        return;
      }
      let parsed: Array<KeySighting | null>;
      try {
        parsed = parseIncarnationSightings(reply, group.length);
      } catch (thrown) {
        onError(toError(thrown));
        return;
      }
      group.forEach((keyIndex, j) => (sightings[keyIndex] = parsed[j] ?? null));
    });
    return sightings;
  };
}

/** Indexes of `keys`, in groups of at most KEYS_PER_SCRIPT; on a cluster, each group within one slot. */
function scriptGroups(keys: readonly StreamName[], cluster: boolean): number[][] {
  const groups: number[][] = [];
  const open = new Map<number, number[]>();
  keys.forEach((key, i) => {
    const slot = cluster ? keySlot(key) : 0;
    let group = open.get(slot);
    if (group === undefined || group.length >= KEYS_PER_SCRIPT) {
      group = [];
      groups.push(group);
      open.set(slot, group);
    }
    group.push(i);
  });
  return groups;
}
