import { connect, ErrorWithReasonCode } from 'mqtt';
import type { MqttClient } from 'mqtt';
import { errorMessage } from '@streamgate/ingest-core';
import { backoffDelay } from '@streamgate/protocol';
import { judgeConnack } from './judgeConnack.js';
import type { ConnackRefusal } from './judgeConnack.js';
import { parseVenuePublish } from './venueSchemas.js';
import type { VenuePayload } from './venueSchemas.js';

/** Why a link went down or a connect attempt failed. */
export type VenueLinkError =
  /** CONNACK with a non-zero MQTT 3.1.1 return code, as `judgeConnack` reads it (4: the key, `key_refused`). */
  | ConnackRefusal
  | { code: 'connect_timeout'; retryable: true; message: string }
  | { code: 'transport'; retryable: true; message: string }
  | { code: 'closed'; retryable: true; message: string };

export type VenueSessionHook = 'onLinkUp' | 'onLinkDown' | 'onConnectFailed' | 'onPayload' | 'onGarbage';

export interface VenueSessionOptions {
  mqttUrl: string;
  appKey: string;
  /** The MQTT client id, and the `session_id` every HTTP call for this session names. */
  sessionId: string;
  /** From dialling to CONNACK, per attempt. */
  connectTimeoutMs: number;
  /** Reconnect delays (full jitter); default 500 ms doubling to 30 s, as the venue's own clients back off. */
  backoff?: { baseMs: number; maxMs: number };
  /** A link that stayed up this long starts the backoff over; a flapping one keeps growing it. Default 10 s. */
  stableAfterMs?: number;
  /** MQTT keepalive; the only way a silently dead TCP path is noticed. Default 30 s. */
  keepaliveSeconds?: number;
  /** CONNACK accepted: the venue now knows `sessionId`, and has no subscriptions for it. */
  onLinkUp(): void;
  /** Once per link that was up and no longer is. Not called for `close()`/`destroy()`. */
  onLinkDown(reason: VenueLinkError): void;
  /** An attempt that never reached CONNACK; the session keeps retrying until closed (a `key_refused` too: the owner decides). */
  onConnectFailed?(error: VenueLinkError, attempt: number): void;
  onPayload(payload: VenuePayload): void;
  onGarbage(topic: string, why: string): void;
  /** A callback above threw; the session carries on, since one bad message must not cost the link. */
  onCallbackError(hook: VenueSessionHook, error: unknown): void;
}

type Phase = 'idle' | 'connecting' | 'up' | 'backoff' | 'closed';

export interface VenueSessionCounters {
  linkUps: number;
  linkDowns: number;
  connectFailures: number;
  payloads: number;
  garbage: number;
}

/**
 * One MQTT session with the venue. mqtt.js's own reconnect is off: every reconnect is a fresh
 * CONNECT whose CONNACK the owner must see (`onLinkUp`), because the venue forgets all of a
 * session's subscriptions on disconnect and the owner has to replay them — a silent library
 * reconnect would leave a live link carrying nothing.
 */
export class VenueSession {
  private phase: Phase = 'idle';
  private client: MqttClient | undefined;
  private connectTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private failures = 0;
  private upAt = 0;
  private lastError: VenueLinkError | undefined;
  private readonly stats: VenueSessionCounters = { linkUps: 0, linkDowns: 0, connectFailures: 0, payloads: 0, garbage: 0 };

  constructor(private readonly opts: VenueSessionOptions) {}

  get sessionId(): string {
    return this.opts.sessionId;
  }

  /** Between a CONNACK and the drop that follows it. */
  get connected(): boolean {
    return this.phase === 'up';
  }

  get state(): Phase {
    return this.phase;
  }

  get counters(): Readonly<VenueSessionCounters> {
    return { ...this.stats };
  }

  /** Starts connecting; events follow through the callbacks. Idempotent while open. */
  open(): void {
    if (this.phase === 'closed') throw new Error(`venue session ${this.opts.sessionId} is closed; make a new one`);
    if (this.phase !== 'idle') return;
    this.dial();
  }

  /** Ends for good: DISCONNECT if linked, no reconnect, no further callbacks. */
  async close(): Promise<void> {
    const client = this.shutdown();
    if (client === undefined) return;
    if (!client.connected) {
      client.end(true);
      return;
    }
    await new Promise<void>((resolve) => {
      // A venue that never closes its side must not hang close(): after the same allowance as a
      // connect, drop the socket. (A second end() would be a no-op once disconnecting.)
      const timer = setTimeout(() => {
        client.stream.destroy();
        resolve();
      }, this.opts.connectTimeoutMs);
      client.end(false, {}, () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Ends for good at once: the socket is dropped without a DISCONNECT. */
  destroy(): void {
    this.shutdown()?.end(true);
  }

  private shutdown(): MqttClient | undefined {
    this.phase = 'closed';
    clearTimeout(this.connectTimer);
    clearTimeout(this.retryTimer);
    this.connectTimer = undefined;
    this.retryTimer = undefined;
    const client = this.client;
    this.client = undefined;
    return client;
  }

  private dial(): void {
    this.phase = 'connecting';
    this.lastError = undefined;
    const { mqttUrl, appKey, sessionId, connectTimeoutMs, keepaliveSeconds = 30 } = this.opts;
    const client = connect(mqttUrl, {
      clientId: sessionId,
      username: appKey,
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
      // Longer than ours, so the deadline that fires (and names the failure) is the one below.
      connectTimeout: connectTimeoutMs * 2,
      keepalive: keepaliveSeconds,
    });
    this.client = client;
    // Our own deadline, not only mqtt.js's: its CONNACK timer starts after TCP connects, so a
    // dial into a black hole would otherwise wait forever.
    this.connectTimer = setTimeout(() => {
      if (client === this.client && this.phase === 'connecting') {
        this.attemptFailed(client, { code: 'connect_timeout', retryable: true, message: `no CONNACK within ${connectTimeoutMs} ms` });
      }
    }, connectTimeoutMs);

    client.on('connect', () => {
      if (client !== this.client || this.phase !== 'connecting') return;
      clearTimeout(this.connectTimer);
      this.phase = 'up';
      this.upAt = performance.now();
      this.stats.linkUps++;
      this.guard('onLinkUp', () => this.opts.onLinkUp());
    });
    client.on('message', (topic: string, payload: Buffer) => {
      if (client === this.client) this.onMessage(topic, payload);
    });
    // Always listened to, even for a discarded client: an EventEmitter 'error' with no listener throws.
    client.on('error', (error: Error) => {
      if (client !== this.client) return;
      const reason = classify(error);
      if (this.phase === 'connecting') this.attemptFailed(client, reason);
      else this.lastError = reason;
    });
    client.on('close', () => {
      if (client !== this.client) return;
      if (this.phase === 'connecting') {
        this.attemptFailed(client, this.lastError ?? { code: 'closed', retryable: true, message: 'connection closed before CONNACK' });
      } else if (this.phase === 'up') {
        this.linkDropped(client, this.lastError ?? { code: 'closed', retryable: true, message: 'connection closed by the venue' });
      }
    });
  }

  private attemptFailed(client: MqttClient, error: VenueLinkError): void {
    this.discard(client);
    this.stats.connectFailures++;
    const attempt = ++this.failures;
    this.scheduleRetry();
    if (this.opts.onConnectFailed !== undefined) {
      const hook = this.opts.onConnectFailed.bind(this.opts);
      this.guard('onConnectFailed', () => hook(error, attempt));
    }
  }

  private linkDropped(client: MqttClient, reason: VenueLinkError): void {
    this.discard(client);
    this.stats.linkDowns++;
    // Only a link that held starts the backoff over; one that drops right after CONNACK
    // (a session-id takeover, a venue shedding load) must not turn into a tight reconnect loop.
    if (performance.now() - this.upAt >= (this.opts.stableAfterMs ?? 10_000)) this.failures = 0;
    this.failures++;
    this.scheduleRetry();
    this.guard('onLinkDown', () => this.opts.onLinkDown(reason));
  }

  private discard(client: MqttClient): void {
    clearTimeout(this.connectTimer);
    this.connectTimer = undefined;
    this.client = undefined;
    client.end(true);
  }

  private scheduleRetry(): void {
    this.phase = 'backoff';
    const { baseMs, maxMs } = this.opts.backoff ?? { baseMs: 500, maxMs: 30_000 };
    this.retryTimer = setTimeout(
      () => {
        this.retryTimer = undefined;
        if (this.phase === 'backoff') this.dial();
      },
      backoffDelay(this.failures - 1, baseMs, maxMs),
    );
  }

  private onMessage(topic: string, payload: Buffer): void {
    const parsed = parseVenuePublish(topic, payload.toString('utf8'));
    if (parsed.ok) {
      this.stats.payloads++;
      this.guard('onPayload', () => this.opts.onPayload(parsed.payload));
    } else {
      this.stats.garbage++;
      this.guard('onGarbage', () => this.opts.onGarbage(topic, parsed.why));
    }
  }

  /** Runs an owner callback so that its exception reaches the owner instead of mqtt.js's packet loop. */
  private guard(hook: VenueSessionHook, run: () => void): void {
    try {
      run();
    } catch (error) {
      try {
        this.opts.onCallbackError(hook, error);
      } catch (reportError) {
        // The reporter itself failed; a process warning is the last place this can still be seen.
        process.emitWarning(
          `venue session ${this.opts.sessionId}: ${hook} threw (${errorMessage(error)}) and onCallbackError threw (${errorMessage(reportError)})`,
        );
      }
    }
  }
}

function classify(error: Error): VenueLinkError {
  if (error instanceof ErrorWithReasonCode) return judgeConnack(error.code);
  return { code: 'transport', retryable: true, message: errorMessage(error) };
}
