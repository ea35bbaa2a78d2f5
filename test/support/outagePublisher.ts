import { Redis } from 'ioredis';
import { demoStream } from '@streamgate/auth';
import { encodeEntryFields } from '@streamgate/protocol';

/**
 * Publishes seq 0, 1, 2, … on `demo:<stream>` one XADD at a time, through Redis outages, so that
 * the stream ends up holding every seq exactly once and in order. After a failed XADD it cannot
 * know whether the entry landed (the server may have applied it before dying), so it reads the
 * stream's last entry and continues after it: the stream, not the publisher, is the truth.
 */
export interface OutagePublisher {
  /** Seqs known to be in the stream (the next seq to publish). */
  readonly published: number;
  /** XADDs that failed and were reconciled against the stream. */
  readonly failures: number;
  /** Stops after the XADD in flight and resolves with the final count. */
  stop(): Promise<number>;
}

export interface OutagePublisherOptions {
  /** Pause after each acknowledged XADD, to pace a test that runs many publishers. Default 0. */
  readonly pauseMs?: number;
}

export function startOutagePublisher(url: string, stream: string, options: OutagePublisherOptions = {}): OutagePublisher {
  // No offline queue and no resend: a command either reaches this server now or fails, so an
  // XADD is never replayed behind the publisher's back after a reconnect.
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => 50,
  });
  // Connection errors are expected during the outage; each failed XADD is handled below.
  redis.on('error', () => undefined);
  const key = demoStream.for(stream).name;
  let next = 0;
  let failures = 0;
  let running = true;

  const lastSeq = async (): Promise<number> => {
    const reply = (await redis.xrevrange(key, '+', '-', 'COUNT', 1)) as Array<[string, string[]]>;
    const fields = reply[0]?.[1];
    if (fields === undefined) return -1;
    const data = fields[fields.indexOf('data') + 1];
    if (data === undefined) throw new Error(`last entry of ${key} has no data field`);
    return (JSON.parse(data) as { seq: number }).seq;
  };

  const loop = async (): Promise<void> => {
    while (running) {
      try {
        await redis.xadd(key, '*', ...encodeEntryFields({ seq: next, text: `event ${next}`, at: new Date().toISOString() }));
        next++;
        if (options.pauseMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
      } catch {
        failures++;
        // Reconcile once the server answers again; until then keep trying (bounded by stop()).
        for (;;) {
          if (!running) return;
          try {
            next = (await lastSeq()) + 1;
            break;
          } catch {
            await new Promise((resolve) => setTimeout(resolve, 20 + Math.random() * 30));
          }
        }
      }
    }
  };
  const done = loop();

  return {
    get published() {
      return next;
    },
    get failures() {
      return failures;
    },
    stop: async () => {
      running = false;
      await done;
      redis.disconnect();
      return next;
    },
  };
}
