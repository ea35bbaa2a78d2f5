import { createServer } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Aedes } from 'aedes';
import type { AedesOptions, Client } from 'aedes';
import { connectAsync } from 'mqtt';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { VenueSession } from './VenueSession.js';
import type { VenueLinkError, VenueSessionHook, VenueSessionOptions } from './VenueSession.js';
import type { VenuePayload } from './venueSchemas.js';

interface Broker {
  url: string;
  aedes: Aedes;
  clients: Map<string, Client>;
  connects: { clientId: string; username: string | undefined; clean: boolean; protocolVersion: number }[];
  publish(clientId: string, topic: string, payload: string): Promise<void>;
  close(): Promise<void>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `mqtt://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function startBroker(options: AedesOptions = {}): Promise<Broker> {
  const connects: Broker['connects'] = [];
  const aedes = await Aedes.createBroker({
    ...options,
    preConnect: (client, packet, done) => {
      connects.push({
        clientId: packet.clientId,
        username: packet.username,
        clean: packet.clean === true,
        protocolVersion: packet.protocolVersion ?? 0,
      });
      done(null, true);
    },
  });
  const clients = new Map<string, Client>();
  aedes.on('clientReady', (client) => clients.set(client.id, client));
  aedes.on('clientDisconnect', (client) => {
    if (clients.get(client.id) === client) clients.delete(client.id);
  });
  const server = createServer((socket) => aedes.handle(socket));
  const url = await listen(server);
  const broker: Broker = {
    url,
    aedes,
    clients,
    connects,
    publish: (clientId, topic, payload) =>
      new Promise((resolve, reject) => {
        const client = clients.get(clientId);
        if (client === undefined) return reject(new Error(`${clientId} not connected`));
        // Straight to that one client, as the venue does: the session never MQTT-subscribes.
        client.publish({ cmd: 'publish', topic, payload: Buffer.from(payload), qos: 0, retain: false, dup: false }, (e) =>
          e ? reject(e) : resolve(),
        );
      }),
    close: async () => {
      server.close();
      await new Promise<void>((resolve) => aedes.close(() => resolve()));
    },
  };
  cleanups.push(() => broker.close());
  return broker;
}

interface Recorder {
  events: string[];
  payloads: VenuePayload[];
  garbage: { topic: string; why: string }[];
  downs: VenueLinkError[];
  failures: { error: VenueLinkError; attempt: number }[];
  callbackErrors: { hook: VenueSessionHook; error: unknown }[];
}

function session(url: string, overrides: Partial<VenueSessionOptions> = {}): { s: VenueSession; r: Recorder } {
  const r: Recorder = { events: [], payloads: [], garbage: [], downs: [], failures: [], callbackErrors: [] };
  const s = new VenueSession({
    mqttUrl: url,
    appKey: 'key-1',
    sessionId: 'sess-1',
    connectTimeoutMs: 2_000,
    backoff: { baseMs: 20, maxMs: 100 },
    onLinkUp: () => r.events.push('up'),
    onLinkDown: (reason) => {
      r.events.push(`down:${reason.code}`);
      r.downs.push(reason);
    },
    onConnectFailed: (error, attempt) => r.failures.push({ error, attempt }),
    onPayload: (p) => r.payloads.push(p),
    onGarbage: (topic, why) => r.garbage.push({ topic, why }),
    onCallbackError: (hook, error) => r.callbackErrors.push({ hook, error }),
    ...overrides,
  });
  cleanups.push(() => s.destroy());
  return { s, r };
}

const quote = (seq: number, symbol = 'BTC-USD') =>
  JSON.stringify({ symbol, kind: 'quote', seq, ts: 1_732_970_000_000 + seq, bid: 1, ask: 2 });
const until = (what: string, check: () => boolean) => waitFor(check, { timeoutMs: 5_000, intervalMs: 5, message: what });

describe('VenueSession', () => {
  it('connects as the venue expects, delivers parsed payloads and counts garbage without dropping the link', async () => {
    const broker = await startBroker();
    const { s, r } = session(broker.url);
    s.open();
    await until('link up', () => s.connected);
    expect(r.events).toEqual(['up']);
    expect(broker.connects).toEqual([{ clientId: 'sess-1', username: 'key-1', clean: true, protocolVersion: 4 }]);

    await broker.publish('sess-1', 'quote/BTC-USD', quote(1));
    await broker.publish('sess-1', 'quote/BTC-USD', 'not json');
    await broker.publish('sess-1', 'quote/ETH-USD', quote(2));
    await broker.publish('sess-1', 'trades/BTC-USD', quote(3));
    await broker.publish('sess-1', 'quote/BTC-USD', JSON.stringify({ symbol: 'BTC-USD', kind: 'quote', seq: 4 }));
    await broker.publish('sess-1', 'quote/BTC-USD', quote(5));
    await until('six messages handled', () => r.payloads.length + r.garbage.length === 6);

    expect(r.payloads.map((p) => p.seq)).toEqual([1, 5]);
    expect(r.payloads[0]).toEqual({ symbol: 'BTC-USD', kind: 'quote', seq: 1, ts: 1_732_970_000_001, bid: 1, ask: 2 });
    expect(r.garbage.map((g) => g.topic)).toEqual(['quote/BTC-USD', 'quote/ETH-USD', 'trades/BTC-USD', 'quote/BTC-USD']);
    expect(r.garbage.map((g) => g.why)).toEqual([
      expect.stringMatching(/not JSON/),
      expect.stringMatching(/disagrees/),
      expect.stringMatching(/topic/),
      expect.stringMatching(/shape/),
    ]);
    expect(s.counters).toMatchObject({ linkUps: 1, linkDowns: 0, payloads: 2, garbage: 4 });
    expect(s.connected).toBe(true);
  });

  it('a callback that throws is reported and handling goes on', async () => {
    const broker = await startBroker();
    let thrown = 0;
    const { s, r } = session(broker.url, {
      onPayload: (p) => {
        if (thrown++ === 0) throw new Error(`boom on ${p.seq}`);
        r.payloads.push(p);
      },
      onGarbage: () => {
        throw new Error('garbage handler broke');
      },
    });
    s.open();
    await until('link up', () => s.connected);
    await broker.publish('sess-1', 'quote/BTC-USD', quote(1));
    await broker.publish('sess-1', 'quote/BTC-USD', '{');
    await broker.publish('sess-1', 'quote/BTC-USD', quote(2));
    await until('second payload', () => r.payloads.length === 1);
    expect(r.payloads.map((p) => p.seq)).toEqual([2]);
    expect(r.callbackErrors.map((e) => [e.hook, (e.error as Error).message])).toEqual([
      ['onPayload', 'boom on 1'],
      ['onGarbage', 'garbage handler broke'],
    ]);
    expect(s.connected).toBe(true);
  });

  it.each([
    ['the broker closes the connection', (c: Client) => c.close()],
    ['the socket is destroyed without DISCONNECT', (c: Client) => (c.conn as Socket).destroy()],
  ])('reconnects with the same id after %s, reporting one down and a new up', async (_name, drop) => {
    const broker = await startBroker();
    const { s, r } = session(broker.url);
    s.open();
    await until('link up', () => s.connected);
    const first = broker.clients.get('sess-1');
    expect(first).toBeDefined();
    if (first !== undefined) drop(first);

    await until('link back up', () => r.events.length === 3 && s.connected);
    expect(r.events).toEqual(['up', 'down:closed', 'up']);
    expect(broker.connects.map((c) => c.clientId)).toEqual(['sess-1', 'sess-1']);
    await until('broker sees the new client', () => broker.clients.get('sess-1') !== undefined && broker.clients.get('sess-1') !== first);
    await broker.publish('sess-1', 'quote/BTC-USD', quote(9));
    await until('payload after reconnect', () => r.payloads.length === 1);
    expect(s.counters).toMatchObject({ linkUps: 2, linkDowns: 1, connectFailures: 0 });
  });

  it('a refused CONNACK is a failed attempt, retried with backoff until closed, never a link', async () => {
    const broker = await startBroker({
      // The session's key is unknown; the probe below (no user name) is let in.
      authenticate: (_client, username, _password, done) =>
        username === 'key-1' ? done(Object.assign(new Error('unknown key'), { returnCode: 4 as const }), null) : done(null, true),
    });
    const { s, r } = session(broker.url);
    s.open();
    await until('three refused attempts', () => r.failures.length >= 3);
    expect(r.failures.slice(0, 3).map((f) => f.attempt)).toEqual([1, 2, 3]);
    expect(r.failures[0]?.error).toMatchObject({ code: 'key_refused', returnCode: 4, retryable: false });
    expect(r.events).toEqual([]);
    expect(s.connected).toBe(false);

    await s.close();
    const attempts = broker.connects.length;
    expect(s.state).toBe('closed');
    // The state says no retry is armed; a probe's full CONNECT/CONNACK round trip through the same
    // broker then shows the broker saw exactly one more connect (the probe's), not a retry.
    const probe = await connectAsync(broker.url, { clientId: 'probe', reconnectPeriod: 0 });
    await probe.endAsync();
    expect(broker.connects.length).toBe(attempts + 1);
    expect(() => s.open()).toThrow(/closed/);
  });

  it('a server that never answers CONNECT is a connect timeout, retried', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => {
      sockets.add(socket);
      // Read and discard the CONNECT; a paused socket would never notice the client hanging up.
      socket.resume();
      socket.on('close', () => sockets.delete(socket));
    });
    const url = await listen(silent);
    cleanups.push(() => {
      for (const socket of sockets) socket.destroy();
      silent.close();
    });
    const { s, r } = session(url, { connectTimeoutMs: 100 });
    s.open();
    await until('two timed-out attempts', () => r.failures.length >= 2);
    expect(r.failures.map((f) => f.error.code).slice(0, 2)).toEqual(['connect_timeout', 'connect_timeout']);
    s.destroy();
    expect(s.state).toBe('closed');
    await until('sockets released', () => sockets.size === 0);
  });

  it('close() sends DISCONNECT, reports no link down and does not reconnect', async () => {
    const broker = await startBroker();
    const disconnects: string[] = [];
    broker.aedes.on('clientDisconnect', (c) => disconnects.push(c.id));
    const { s, r } = session(broker.url);
    s.open();
    s.open();
    await until('link up', () => s.connected);
    await withDeadline(s.close(), 2_000, 'close');
    await until('broker saw the disconnect', () => disconnects.length === 1);
    expect(s.connected).toBe(false);
    expect(s.state).toBe('closed');
    expect(r.events).toEqual(['up']);
    const probe = await connectAsync(broker.url, { clientId: 'probe', reconnectPeriod: 0 });
    await probe.endAsync();
    expect(broker.connects.map((c) => c.clientId)).toEqual(['sess-1', 'probe']);
  });
});
