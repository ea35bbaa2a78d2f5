import type { Redis } from 'ioredis';
import type { Fleet, FleetRelay } from './startFleet.js';

export interface DemoStreamOn {
  /** The fleet's first relay. */
  readonly relay: FleetRelay;
  /** The Redis key the demo router maps the stream to (`demo:<stream>`): entries written there reach subscribers. */
  readonly key: string;
  /** A client of the fleet's Redis, to write the stream's entries. */
  readonly redis: Redis;
  /** A token for the stream, as the auth service's demo router issues it to `user`. */
  readonly token: (user: string) => Promise<string>;
}

/** What a test of one demo stream through the first relay of a fleet needs. */
export function demoStreamOn(fleet: Fleet, stream: string): DemoStreamOn {
  const relay = fleet.relays[0];
  if (relay === undefined) throw new Error('no relay');
  return {
    relay,
    key: `demo:${stream}`,
    redis: fleet.redis.client(),
    token: async (user) => (await fleet.trpc.demo.token.query({ stream, user })).token,
  };
}
