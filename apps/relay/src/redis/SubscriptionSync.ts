import { backoffDelay } from '@streamgate/protocol';
import type { StreamName } from '@streamgate/protocol';
import type { KeyspaceChannels } from './KeyspaceChannels.js';
import type { NotifyRedis } from './NotifyRedis.js';
import { toError } from './redisFailure.js';
import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';

export interface SubscriptionSyncOptions {
  readonly redis: Pick<NotifyRedis, 'subscribe' | 'unsubscribe' | 'subscriberReady'>;
  readonly clock: Clock;
  /** Whether the reader watches this key now. */
  readonly wanted: (key: StreamName) => boolean;
  /** Redis confirmed these keys' channels and they are still watched: read them from their cursors. */
  readonly onConfirmed: (keys: readonly StreamName[]) => void;
  readonly onError: (error: Error) => void;
  /** Channels per SUBSCRIBE or UNSUBSCRIBE. Default 500. */
  readonly batchSize?: number;
  /** Commands awaiting their confirmation at once. Default 4. */
  readonly maxInFlight?: number;
}

/**
 * Keeps the pub/sub connection's channels equal to the watched set. A reconnect storm (10,000
 * keys to subscribe again) goes out as SUBSCRIBEs of `batchSize` channels, at most
 * `maxInFlight` unconfirmed at once, so neither Redis nor the connection gets one giant command
 * or an unbounded queue. Only keys whose state may differ are looked at: a change of one key
 * costs one set insertion, not a scan of every watched key.
 */
export class SubscriptionSync implements KeyspaceChannels {
  /** Confirmed by the server on the current connection. */
  private readonly subscribed = new Set<StreamName>();
  private readonly inFlight = new Set<StreamName>();
  /** Keys whose wanted state may differ from the server's. */
  private readonly pending = new Set<StreamName>();
  /**
   * Subscribed, but some of their channels may have been dropped by the server: to be subscribed
   * again. They stay in `subscribed`, so a key routed elsewhere meanwhile is still unsubscribed.
   */
  private readonly resend = new Set<StreamName>();
  /** In flight when the server dropped channels: their confirmation may predate the drop. */
  private readonly stale = new Set<StreamName>();
  private commands = 0;
  /** Bumped on every connection loss: confirmations of an earlier connection are stale. */
  private generation = 0;
  private failures = 0;
  private retrying = false;
  private running = true;

  constructor(private readonly options: SubscriptionSyncOptions) {}

  /** The connection can take SUBSCRIBE. */
  get ready(): boolean {
    return this.options.redis.subscriberReady;
  }

  /** Channels the server has confirmed on this connection. */
  get channelCount(): number {
    return this.subscribed.size;
  }

  isSubscribed(key: StreamName): boolean {
    return this.subscribed.has(key);
  }

  /** The key was watched or unwatched. */
  changed(key: StreamName): void {
    this.pending.add(key);
    this.pump();
  }

  /** The server dropped every channel with the connection; nothing in flight will be confirmed. */
  connectionLost(): void {
    this.generation++;
    this.subscribed.clear();
    this.inFlight.clear();
    this.resend.clear();
    this.stale.clear();
    this.commands = 0;
  }

  /**
   * The server dropped some channels without saying which (an unsolicited SUNSUBSCRIBE): every
   * key still wanted here is subscribed again and read once confirmed. SUBSCRIBE and SSUBSCRIBE of
   * a channel still held change nothing; a key in flight is sent again once its confirmation
   * comes, which may predate the drop.
   */
  channelsDropped(): void {
    for (const key of this.subscribed) {
      if (this.inFlight.has(key)) continue;
      this.resend.add(key);
      this.pending.add(key);
    }
    for (const key of this.inFlight) this.stale.add(key);
    this.pump();
  }

  /** A fresh connection: every watched key is subscribed again (and read once confirmed). */
  connectionReady(watched: Iterable<StreamName>): void {
    for (const key of watched) this.pending.add(key);
    this.pump();
  }

  close(): void {
    this.running = false;
  }

  private pump(): void {
    const batchSize = this.options.batchSize ?? 500;
    const maxInFlight = this.options.maxInFlight ?? 4;
    while (this.running && this.commands < maxInFlight && this.pending.size > 0 && this.options.redis.subscriberReady) {
      const subscribe: StreamName[] = [];
      const unsubscribe: StreamName[] = [];
      for (const key of this.pending) {
        this.pending.delete(key);
        // Its confirmation looks at the key again.
        if (this.inFlight.has(key)) continue;
        const want = this.options.wanted(key);
        const resend = this.resend.delete(key);
        if (want && (resend || !this.subscribed.has(key))) subscribe.push(key);
        else if (!want && this.subscribed.has(key)) unsubscribe.push(key);
        if (subscribe.length >= batchSize || unsubscribe.length >= batchSize) break;
      }
      if (subscribe.length > 0) this.send(true, subscribe);
      if (unsubscribe.length > 0) this.send(false, unsubscribe);
    }
  }

  private send(subscribe: boolean, keys: readonly StreamName[]): void {
    const generation = this.generation;
    this.commands++;
    for (const key of keys) this.inFlight.add(key);
    const sent = subscribe ? this.options.redis.subscribe(keys) : this.options.redis.unsubscribe(keys);
    sent.then(
      () => {
        if (generation !== this.generation || !this.running) return;
        this.failures = 0;
        this.settle(keys);
        const confirmed: StreamName[] = [];
        for (const key of keys) {
          const stale = this.stale.delete(key);
          if (subscribe) this.subscribed.add(key);
          else this.subscribed.delete(key);
          if (subscribe && stale) this.resend.add(key);
          if (this.options.wanted(key) !== this.subscribed.has(key) || this.resend.has(key)) this.pending.add(key);
          else if (subscribe) confirmed.push(key);
        }
        if (confirmed.length > 0) this.options.onConfirmed(confirmed);
        this.pump();
      },
      (thrown: unknown) => {
        if (generation !== this.generation || !this.running) return;
        this.settle(keys);
        for (const key of keys) {
          // A failed resend leaves the key subscribed as far as this knows: it must go out again.
          if (this.stale.delete(key) || subscribe) this.resend.add(key);
          this.pending.add(key);
        }
        this.options.onError(toError(thrown));
        void this.retryLater();
      },
    );
  }

  private settle(keys: readonly StreamName[]): void {
    this.commands--;
    for (const key of keys) this.inFlight.delete(key);
  }

  private async retryLater(): Promise<void> {
    if (this.retrying) return;
    this.retrying = true;
    this.failures++;
    await sleepOn(this.options.clock, backoffDelay(this.failures, 50, 5_000));
    this.retrying = false;
    this.pump();
  }
}
