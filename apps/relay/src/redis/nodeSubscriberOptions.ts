import type { RedisOptions } from 'ioredis';
import { backoffDelay } from '@streamgate/protocol';
import { nodeAddress } from './nodeAddress.js';
import { SUBSCRIBER_SOCKET_TIMEOUT_MS } from './SubscriberHeartbeat.js';

/**
 * The options of a plain pub/sub connection to one cluster primary: the cluster client's own
 * per-node options (credentials, TLS and the servername its certificate is checked against,
 * protocol), so it is checked and authenticated as the cluster's connections are, never rebuilt
 * from the node name as a URL (an IPv6 name is none, and TLS would check the node's IP).
 * Throws a RangeError for a node name that is no `host:port`.
 */
export function nodeSubscriberOptions(clusterNode: RedisOptions | undefined, node: string, connectionName: string): RedisOptions {
  const address = nodeAddress(node);
  if (address === null) throw new RangeError(`"${node}" is not a cluster node address (host:port)`);
  const options = { ...clusterNode };
  // Those are the reads' bounds; a subscriber waits for messages as long as it takes, and only
  // its heartbeat PING must be answered (SubscriberHeartbeat).
  delete options.commandTimeout;
  return {
    ...options,
    socketTimeout: SUBSCRIBER_SOCKET_TIMEOUT_MS,
    ...address,
    connectionName,
    // Channels are subscribed by ClusterChannels, in bounded batches: ioredis's own resubscribe
    // would send all of them in one command.
    autoResubscribe: false,
    maxRetriesPerRequest: null,
    retryStrategy: (times) => backoffDelay(times, 50, 5_000),
  };
}
