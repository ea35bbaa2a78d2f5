// Fixture for the venue simulator's tests: a real mqtt.js session over TCP, the payloads it
// receives, and a JSON POST helper. Not part of the built testkit (mqtt is a dev dependency).
import { connect } from 'mqtt';
import type { MqttClient } from 'mqtt';

export interface ReceivedPayload {
  topic: string;
  symbol: string;
  kind: string;
  seq: number;
  ts: number;
  [field: string]: unknown;
}

export interface TestSession {
  readonly client: MqttClient;
  readonly received: ReceivedPayload[];
  /** Topics whose payload did not parse as the venue's JSON. */
  readonly garbage: string[];
  /** Errors after the CONNACK, e.g. the ECONNRESET of crashSocket. */
  readonly errors: Error[];
  /** Set once the connection has closed, for whatever reason. */
  readonly closed: () => boolean;
  end(): Promise<void>;
}

/** An MQTT CONNECT refused by the venue: `code` is the CONNACK return code. */
export class ConnackRefused extends Error {
  constructor(
    readonly code: number | undefined,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Opens one MQTT 3.1.1 session (clientId = session id, username = app key) and resolves after
 * its CONNACK; rejects with ConnackRefused if the venue refuses it. No automatic reconnect: a
 * test that drops a session decides itself whether to come back.
 */
export function openSession(mqttUrl: string, sessionId: string, appKey: string): Promise<TestSession> {
  const client = connect(mqttUrl, {
    clientId: sessionId,
    username: appKey,
    protocolVersion: 4,
    reconnectPeriod: 0,
    connectTimeout: 10_000,
  });
  const received: ReceivedPayload[] = [];
  const garbage: string[] = [];
  const errors: Error[] = [];
  let closed = false;
  client.on('close', () => (closed = true));
  client.on('message', (topic, payload) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload.toString('utf8'));
    } catch {
      garbage.push(topic);
      return;
    }
    const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
    const { symbol, kind, seq, ts } = fields;
    if (typeof symbol !== 'string' || typeof kind !== 'string' || typeof seq !== 'number' || typeof ts !== 'number') {
      garbage.push(topic);
      return;
    }
    received.push({ ...fields, topic, symbol, kind, seq, ts });
  });
  const session: TestSession = {
    client,
    received,
    garbage,
    errors,
    closed: () => closed,
    end: () => client.endAsync(true),
  };
  return new Promise((resolve, reject) => {
    const onError = (error: Error & { code?: unknown }) => {
      cleanup();
      client.end(true);
      reject(new ConnackRefused(typeof error.code === 'number' ? error.code : undefined, error.message));
    };
    const onClose = () => {
      cleanup();
      reject(new ConnackRefused(undefined, `session ${sessionId} closed before its CONNACK`));
    };
    const onConnect = () => {
      cleanup();
      client.on('error', (error) => errors.push(error));
      resolve(session);
    };
    const cleanup = () => {
      client.off('error', onError);
      client.off('close', onClose);
      client.off('connect', onConnect);
    };
    client.on('error', onError);
    client.on('close', onClose);
    client.on('connect', onConnect);
  });
}

export interface JsonAnswer {
  status: number;
  body: Record<string, unknown>;
}

/** POSTs `body` (a string is sent as is, so tests can send broken JSON) and parses the answer. */
export async function postJson(url: string, body: unknown, appKey?: string): Promise<JsonAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (appKey !== undefined) headers['x-app-key'] = appKey;
  const res = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export const SIM_APP_KEY = 'sim-app-key';
export const ALL_SUB_TYPES = ['SNAPSHOT', 'QUOTE', 'TICK'];

/** Opens sessions a test file ends in its afterEach, so no client outlives its test. */
export function sessionTracker() {
  const opened: TestSession[] = [];
  return {
    open: async (venue: { mqttUrl: string }, sessionId: string, appKey = SIM_APP_KEY): Promise<TestSession> => {
      const session = await openSession(venue.mqttUrl, sessionId, appKey);
      opened.push(session);
      return session;
    },
    endAll: async (): Promise<void> => {
      await Promise.all(opened.splice(0).map((s) => s.end()));
    },
  };
}
