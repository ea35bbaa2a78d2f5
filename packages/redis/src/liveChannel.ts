import { hashSlotPart } from './hashSlotPart.js';
import { isClusterClient } from './openRedis.js';
import type { RedisClient } from './openRedis.js';

/**
 * The per-stream channel a writer publishes each entry on, right after its XADD and in the same
 * script (docs/protocol.md §11, "The live message"): `streamgate@<db>:{S}<stream>`, where `{S}`
 * is the stream's hash tag (S: the part of the name Redis Cluster hashes), so the channel hashes
 * to the stream's own slot and a Redis Cluster's `SPUBLISH` of it stays on the stream's node. The
 * database is part of the name because pub/sub is not per database. Null for a stream hashed
 * whole whose name holds a `}`: no channel can share its slot, and its entries travel by the
 * keyspace notification path alone.
 */
export function liveChannel(stream: string, db: number): string | null {
  const part = hashSlotPart(stream);
  if (part.includes('}')) return null;
  return `streamgate@${db}:{${part}}${stream}`;
}

/** Whether the stream has a live channel (liveChannel is not null). */
export function hasLiveChannel(stream: string): boolean {
  return !hashSlotPart(stream).includes('}');
}

/** Everything before the stream name in its live channel, up to and including the tag's `{`. */
export function liveChannelPrefix(db: number): string {
  return `streamgate@${db}:{`;
}

/**
 * The stream a live channel names (the text after the tag's closing brace), or null if it is not
 * one of this database's live channels. The tag holds no `}`, so the first one closes it.
 */
export function liveChannelStream(channel: string, db: number): string | null {
  const prefix = liveChannelPrefix(db);
  if (!channel.startsWith(prefix)) return null;
  const close = channel.indexOf('}', prefix.length);
  return close === -1 ? null : channel.slice(close + 1);
}

/**
 * The Lua that publishes one written entry, for a script that has just XADDed it: `prev` is the
 * id of the stream's last entry before that XADD (`'0-0'` for none), read with
 * `XREVRANGE key + - COUNT 1` before it. A script sets `LIVE_CHANNEL` ('' for none) and
 * `LIVE_PUBLISH` (`PUBLISH`, or `SPUBLISH` on a Redis Cluster) from its arguments.
 */
export const LIVE_PUBLISH_LUA = `
local function live_prev(key)
  local last = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)
  if last[1] then return last[1][1] end
  return '0-0'
end
local function live_publish(channel, command, prev, id, data)
  if channel ~= '' then redis.call(command, channel, prev .. ' ' .. id .. ' ' .. data) end
end
`;

/**
 * The two script arguments LIVE_PUBLISH_LUA needs for a write of `stream` through `client`: the
 * channel ('' when the stream has none) and the command, `SPUBLISH` on a Redis Cluster (shard
 * channels stay on the slot's node), `PUBLISH` on an instance (any Redis version).
 */
export function livePublishArgs(client: RedisClient, stream: string): [channel: string, command: 'PUBLISH' | 'SPUBLISH'] {
  if (isClusterClient(client)) return [liveChannel(stream, 0) ?? '', 'SPUBLISH'];
  return [liveChannel(stream, client.options.db ?? 0) ?? '', 'PUBLISH'];
}
