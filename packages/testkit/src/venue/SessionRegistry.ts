import type { Client } from 'aedes';
import type { VenueKind } from './venueKinds.js';
import { VENUE_KINDS } from './venueKinds.js';

/** What the venue knows about one registered MQTT session, as a test sees it. */
export interface VenueSimSession {
  id: string;
  appKey: string;
  /** The broker still holds the connection; false only in the moment between a drop and its cleanup. */
  connected: boolean;
  /** Sorted by symbol; kinds in snapshot, quote, tick order. */
  subscribed: { symbol: string; kinds: VenueKind[] }[];
  silenced: boolean;
}

/**
 * Whether the session's connection is still up. Not `client.connected`: aedes sets that only after
 * its whole CONNECT sequence, a moment after the CONNACK the client may already be acting on.
 */
export function isLive(client: Client): boolean {
  return !client.closed && !client.conn.destroyed;
}

/** One live session: the connection it arrived on and what it has subscribed. */
export interface VenueSessionState {
  readonly id: string;
  readonly appKey: string;
  readonly client: Client;
  readonly subscribed: Map<string, Set<VenueKind>>;
  silenced: boolean;
}

/**
 * Sessions the venue has registered (CONNACK sent) and not yet forgotten. Keyed by client id, but
 * every removal names the connection too: after a takeover the old connection's late disconnect
 * must not erase its successor.
 */
export class SessionRegistry {
  private readonly byId = new Map<string, VenueSessionState>();

  /** Registers `client` as session `client.id`, replacing any earlier connection under that id; idempotent. */
  register(client: Client, appKey: string): VenueSessionState {
    const existing = this.byId.get(client.id);
    if (existing?.client === client) return existing;
    const state: VenueSessionState = { id: client.id, appKey, client, subscribed: new Map(), silenced: false };
    this.byId.set(client.id, state);
    return state;
  }

  /** Forgets the session if `client` is still the connection it lives on. */
  forget(client: Client): boolean {
    const state = this.byId.get(client.id);
    if (state?.client !== client) return false;
    this.byId.delete(client.id);
    return true;
  }

  get(id: string): VenueSessionState | undefined {
    return this.byId.get(id);
  }

  /** The session `id` if it is registered under `appKey`; another key's session is no session. */
  find(appKey: string, id: string): VenueSessionState | undefined {
    const state = this.byId.get(id);
    return state?.appKey === appKey ? state : undefined;
  }

  all(): IterableIterator<VenueSessionState> {
    return this.byId.values();
  }

  /** How many distinct symbols the session would hold after adding `symbols`. */
  static symbolCountWith(state: VenueSessionState, symbols: readonly string[]): number {
    let extra = 0;
    const seen = new Set<string>();
    for (const symbol of symbols) {
      if (state.subscribed.has(symbol) || seen.has(symbol)) continue;
      seen.add(symbol);
      extra += 1;
    }
    return state.subscribed.size + extra;
  }

  static subscribe(state: VenueSessionState, symbols: readonly string[], kinds: readonly VenueKind[]): void {
    for (const symbol of symbols) {
      const held = state.subscribed.get(symbol) ?? new Set<VenueKind>();
      for (const kind of kinds) held.add(kind);
      state.subscribed.set(symbol, held);
    }
  }

  static unsubscribe(state: VenueSessionState, symbols: readonly string[], kinds: readonly VenueKind[]): void {
    for (const symbol of symbols) {
      const held = state.subscribed.get(symbol);
      if (!held) continue;
      for (const kind of kinds) held.delete(kind);
      if (held.size === 0) state.subscribed.delete(symbol);
    }
  }

  static view(state: VenueSessionState): VenueSimSession {
    const symbols = [...state.subscribed.keys()].sort();
    return {
      id: state.id,
      appKey: state.appKey,
      connected: isLive(state.client),
      subscribed: symbols.map((symbol) => {
        const held = state.subscribed.get(symbol);
        return { symbol, kinds: VENUE_KINDS.filter((kind) => held?.has(kind) === true) };
      }),
      silenced: state.silenced,
    };
  }
}
