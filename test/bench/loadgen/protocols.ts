/**
 * The servers under test; each speaks its own minimal protocol to the same raw client. `uwsfloor`
 * is bare uWS fed by the relay's live channels (servers/uwsRedisFeed.ts): the floor of the
 * relay's design, run only when BENCH_SERVERS names it.
 */
export const SERVER_KINDS = ['relay', 'socketio', 'wsrelay', 'uws', 'uwsfloor'] as const;
export type ServerKind = (typeof SERVER_KINDS)[number];

/** What BENCH_SERVERS runs when it is not set: the four servers the benchmark compares. */
export const DEFAULT_SERVER_KINDS: readonly ServerKind[] = ['relay', 'socketio', 'wsrelay', 'uws'];

export interface ProtocolSubscription {
  readonly stream: string;
  /** Relay only: the token naming the stream. */
  readonly token: string | undefined;
  /** Relay only: resume after this id. */
  readonly from: string | undefined;
}

/** One connection's protocol: what to send on open, and what a control (non-event) frame means. */
export interface Protocol {
  readonly path: string;
  onOpen(subs: readonly ProtocolSubscription[], send: (text: string) => void): void;
  /** Returns how many subscriptions this frame confirmed; -1 for an error frame. */
  onControl(text: string, subs: readonly ProtocolSubscription[], send: (text: string) => void): number;
}

const relay: Protocol = {
  path: '/v1/ws',
  onOpen(subs, send) {
    subs.forEach((sub, i) => {
      const from = sub.from === undefined ? '' : `,"from":"${sub.from}"`;
      send(`{"op":"subscribe","sid":"s${i}","token":"${sub.token ?? ''}"${from}}`);
    });
  },
  onControl(text, _subs, send) {
    // The relay's liveness ping: a client that never answers is closed with 4006 (protocol.md §8).
    if (text === '{"op":"ping"}') {
      send('{"op":"pong"}');
      return 0;
    }
    if (text.includes('"op":"live"')) return 1;
    if (text.includes('"op":"error"') || text.includes('"op":"unsubscribed"')) return -1;
    return 0;
  },
};

// Engine.IO 4 over a WebSocket: the server opens with `0{…}`, the client joins the default
// namespace with `40`, the server pings with `2` and expects `3`; events are `42[name, …args]`.
const socketio: Protocol = {
  path: '/socket.io/?EIO=4&transport=websocket',
  onOpen() {
    // Nothing until the server's open packet.
  },
  onControl(text, subs, send) {
    if (text === '2') {
      send('3');
      return 0;
    }
    if (text.startsWith('0{')) {
      send('40');
      return 0;
    }
    if (text.startsWith('40')) {
      for (const sub of subs) send(`42["join",${JSON.stringify(sub.stream)}]`);
      return 0;
    }
    if (text.startsWith('42["joined"')) return 1;
    if (text.startsWith('44')) return -1;
    return 0;
  },
};

const joinProtocol: Protocol = {
  path: '/',
  onOpen(subs, send) {
    for (const sub of subs) send(`{"join":${JSON.stringify(sub.stream)}}`);
  },
  onControl(text) {
    return text.startsWith('{"joined"') ? 1 : 0;
  },
};

export const PROTOCOLS: Record<ServerKind, Protocol> = {
  relay,
  socketio,
  wsrelay: joinProtocol,
  uws: joinProtocol,
  uwsfloor: joinProtocol,
};
