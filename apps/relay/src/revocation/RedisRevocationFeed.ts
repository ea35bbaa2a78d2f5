import type { Logger } from 'pino';
import { REVOCATIONS_CHANNEL, REVOCATIONS_KEY, parseRevocationRecord } from '@streamgate/protocol';
import type { RevocationRecord } from '@streamgate/protocol';
import { openRedis } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';

export interface RevocationFeedOptions {
  readonly targets: readonly string[];
  readonly username?: string | undefined;
  readonly password?: string | undefined;
  readonly connectionName: string;
  readonly log: Logger;
  /** A record read from a target (published now, or loaded from the set); repeats are the caller's to ignore. */
  readonly onRecord: (record: RevocationRecord) => void;
  /** A member or message that is not a revocation record: logged and counted, never applied. */
  readonly onInvalid: (message: string) => void;
}

export interface RevocationFeed {
  close(): Promise<void>;
}

/**
 * Reads revocations from every allowlisted target: the channel for new ones (they reach the relay
 * within a round trip of the revoke), and the whole set each time the subscriber connection is
 * ready, at start and after every reconnect, for those published while it was away.
 */
export function startRevocationFeed(options: RevocationFeedOptions): RevocationFeed {
  const clients: RedisClient[] = [];
  const apply = (text: string): void => {
    const parsed = parseRevocationRecord(text);
    if (parsed.ok) options.onRecord(parsed.record);
    else options.onInvalid(parsed.message);
  };
  for (const target of options.targets) {
    const open = (role: string): RedisClient => {
      const client = openRedis(target, {
        username: options.username,
        password: options.password,
        connectionName: `${options.connectionName}:revocations-${role}`,
      });
      client.on('error', (error: Error) => options.log.warn({ err: error, target }, `revocation ${role} connection error`));
      clients.push(client);
      return client;
    };
    const subscriber = open('subscriber');
    const reader = open('reader');
    const load = async (): Promise<void> => {
      const members = await reader.zrangebyscore(REVOCATIONS_KEY, Date.now(), '+inf');
      for (const member of members) apply(member);
      options.log.debug({ target, records: members.length }, 'revocations loaded');
    };
    subscriber.on('message', (channel: string, text: string) => {
      if (channel === REVOCATIONS_CHANNEL) apply(text);
    });
    subscriber.on('ready', () => {
      subscriber
        .subscribe(REVOCATIONS_CHANNEL)
        .then(load)
        .catch((error: unknown) =>
          options.log.error({ err: error, target }, 'revocations could not be loaded; retried at the next reconnect'),
        );
    });
  }
  return {
    close: async () => {
      await Promise.allSettled(clients.map((c) => c.quit()));
    },
  };
}
