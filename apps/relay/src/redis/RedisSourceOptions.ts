import type { StreamName } from '@streamgate/protocol';
import type { SourceListener } from '../core/StreamSource.js';
import type { ReadMode } from './LiveReader.js';
import type { RequestedReadMode } from './ReadModeSwitch.js';
import type { StreamResetCause } from './StreamResetCause.js';

/** What a RedisStreamSource is built from: its target, its reads' settings, and where it reports. */
export interface RedisSourceOptions {
  /** Canonical target URL from the token (no credentials). */
  readonly target: string;
  readonly username: string | undefined;
  readonly password: string | undefined;
  readonly blockMs: number;
  readonly readCount: number;
  readonly maxStreamsPerReader: number;
  readonly listener: SourceListener;
  readonly onError: (operation: string, error: Error) => void;
  /** `check`: one pipelined look at a group of watched keys for a new incarnation. */
  readonly onRead: (kind: 'xread' | 'xrange' | 'xinfo' | 'check') => void;
  /** A watched key was found holding a new incarnation, or missing entries it delivered (and its subscribers were told). */
  readonly onRecreated?: (stream: StreamName, cause: StreamResetCause) => void;
  /**
   * The periodic check for a new incarnation looks at 1,000 watched keys (batch reads) or 100
   * (notification-driven) per this interval, a tenth of them every tenth of it. Default 1 000 ms.
   */
  readonly recreationCheckIntervalMs?: number;
  /** A connection became ready again after losing its server. */
  readonly onReconnect?: (connection: 'command' | 'reader') => void;
  readonly connectionName: string;
  /** How often the command connection is probed with PING. Default 1 000 ms. */
  readonly probeIntervalMs?: number;
  /** A PING unanswered this long marks the source unhealthy until one is answered. Default 2 000 ms. */
  readonly probeTimeoutMs?: number;
  /** Default `auto`: notification-driven reads where the server notifies for stream keys. */
  readonly readMode?: RequestedReadMode;
  /**
   * How often the server's `notify-keyspace-events` is looked at again: the bound on the delay of
   * an entry written after notifications were turned off. Default 5 000 ms.
   */
  readonly readModeCheckMs?: number;
  /**
   * Notification-driven reads: every watched key is read this often anyway, the backstop for a
   * notification lost in a way no check shows. Default 60 000 ms (5 000 ms, or this if shorter,
   * while a cluster primary does not notify).
   */
  readonly notifySweepMs?: number;
  /** The read mode was chosen (previous null) or changed. */
  readonly onReadMode?: (mode: ReadMode, previous: ReadMode | null) => void;
  /** A Redis Cluster target: the primaries lacking K or t in notify-keyspace-events, when that set changed. */
  readonly onNodesWithoutNotify?: (nodes: readonly string[]) => void;
}
