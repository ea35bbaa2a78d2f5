import { RateLimiter } from './RateLimiter.js';
import { SessionBudget } from './SessionBudget.js';
import type { VenueConfig } from './venueConfig.js';

/** What every topology venue on one (endpoint, app key) shares. */
export interface VenueKeyShare {
  /** The key's request rate: the venue limits per key, whichever entry sends. */
  readonly limiter: RateLimiter;
  /** The key's sessions: the venue caps them per key, whichever entry opens them. */
  readonly sessions: SessionBudget;
}

type ShareConfig = Pick<VenueConfig, 'httpUrl' | 'appKey' | 'rateLimit' | 'maxSessions'>;

/**
 * One rate limiter and one session budget per (venue endpoint, app key), handed to every
 * topology venue using that pair, so entries sharing a key stay within the key's limits
 * together. The endpoint is `httpUrl` normalized (scheme, host and port as a URL reads them, a
 * trailing `/` dropped): the venue's API is where the key's limits are kept. The first entry
 * of a pair sets the numbers; the topology refuses entries of one pair that disagree on them.
 */
export class VenueKeyShares {
  private readonly shares = new Map<string, VenueKeyShare>();

  for(config: ShareConfig): VenueKeyShare {
    const id = VenueKeyShares.idOf(config);
    let share = this.shares.get(id);
    if (share === undefined) {
      share = { limiter: new RateLimiter(config.rateLimit), sessions: new SessionBudget(config.maxSessions) };
      this.shares.set(id, share);
    }
    return share;
  }

  /** The venue endpoint as configured entries are compared: `httpUrl` normalized. */
  static endpointOf(httpUrl: string): string {
    const url = new URL(httpUrl);
    return `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  }

  /** Groups entries by endpoint and key; in memory only (it holds the key), never logged. */
  static idOf(config: Pick<VenueConfig, 'httpUrl' | 'appKey'>): string {
    return JSON.stringify([VenueKeyShares.endpointOf(config.httpUrl), config.appKey]);
  }
}
