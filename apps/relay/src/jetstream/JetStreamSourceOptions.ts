import type { Clock, JetStreamTargetAddress, StreamName } from '@streamgate/protocol';
import type { SourceListener } from '../core/StreamSource.js';

/** `get`: one STREAM.MSG.GET; `info`: one STREAM.INFO (a resume's metadata, or the periodic check). */
export type JetStreamReadKind = 'get' | 'info';

/**
 * What failed: `connection`, the NATS connection (it reconnects by itself, or is opened anew
 * after a backoff once the servers refused the login or the client gave it up); `read`, a read of a
 * watched stream (retried with backoff); `check`, the periodic look at the JetStream stream;
 * `live`, a republished message the source could not read (its stream is read instead);
 * `republish`, the JetStream stream has no republish the relay can hear (RepublishMissingError):
 * watched streams are polled until it has.
 */
export type JetStreamOperation = 'connection' | 'read' | 'check' | 'live' | 'republish';

/** Why a watched stream was read again from its start (JetStreamStreamSource's `onRecreated`). */
export type JetStreamResetCause = 'recreated' | 'sequence_fell' | 'unknown_position';

/** What a JetStreamStreamSource is built from: its target, its credentials, and where it reports. */
export interface JetStreamSourceOptions {
  /** The parsed target (parseJetStreamTarget): seeds, TLS, and the JetStream stream. */
  readonly target: JetStreamTargetAddress;
  /** Credentials from the relay's configuration, never from a token. */
  readonly user?: string;
  readonly pass?: string;
  readonly token?: string;
  readonly listener: SourceListener;
  readonly onError: (operation: JetStreamOperation, error: Error) => void;
  readonly onRead: (kind: JetStreamReadKind) => void;
  /**
   * Every failed attempt to open a new NATS connection after the outage's first (which went to
   * `onError('connection')`): to be counted, not logged again. Default `onError('connection')`.
   */
  readonly onConnectRetry?: (error: Error) => void;
  /** A watched stream is read again from its start, and its subscribers were told (listener.reset). */
  readonly onRecreated?: (stream: StreamName, cause: JetStreamResetCause) => void;
  /** The NATS connection came back after a loss; every watched stream is read from its position. */
  readonly onReconnect?: () => void;
  /** Timers (the check, polling, read retries). Default systemClock. */
  readonly clock?: Clock;
  /** Client connection name, as the server lists it. */
  readonly connectionName?: string;
  /** A JetStream request unanswered this long fails (retryable). Default 2 000 ms. */
  readonly requestTimeoutMs?: number;
  /** How often the JetStream stream's info is looked at (recreation, leader, republish, health). Default 1 000 ms. */
  readonly checkIntervalMs?: number;
  /** Without republish, how often every watched stream is read. Default 1 000 ms. */
  readonly pollIntervalMs?: number;
  /** Reads of watched streams in flight at once, at most. Default 64. */
  readonly maxConcurrentReads?: number;
  /** Client PINGs: a server frozen this long (interval × 3) is left for another. Default 2 000 ms. */
  readonly pingIntervalMs?: number;
}
