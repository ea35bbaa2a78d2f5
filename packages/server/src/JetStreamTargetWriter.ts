import type { StreamName } from '@streamgate/protocol';
import type { PublishResult } from './PublishError.js';

/** How a publisher reaches one JetStream target (credentials stay out of the URL). */
export type JetStreamTargetWriterOptions = {
  /** A normalized `nats://` or `tls://` target (normalizeJetStreamTarget). */
  target: string;
  credentials: { user: string; pass: string } | undefined;
  /** The NATS connection's name as the servers list it; undefined: `streamgate-publisher`. */
  connectionName: string | undefined;
  /** The publisher's `timeoutMs`: the JetStream client's default request timeout. */
  timeoutMs: number;
};

/**
 * createPublisher's writer for one JetStream target. Declared here, outside `jetstream/`, so that
 * nothing the main entry imports or declares names the NATS client (a consumer compiled with
 * `skipLibCheck: false` cannot compile its declarations): jetstream/openJetStreamTargetWriter.ts
 * implements it, and is imported on the first publish to such a target (JetStreamTargetWriters).
 */
export interface JetStreamTargetWriter {
  /**
   * Stores an entry whose `data` the publisher encoded and checked, with a checked idempotency
   * key, within `timeoutMs`. Never rejects; a JetStream error is answered as a PublishError.
   */
  write(stream: StreamName, data: string, idempotencyKey: string | undefined, timeoutMs: number): Promise<PublishResult>;
  /** Later writes answer `closed`; the connection is drained (acks already due still arrive), then closed. */
  close(): Promise<void>;
}
