import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import type { IngestError } from '../IngestError.js';
import { DataSubject } from './DataSubject.js';
import { IngestStateLog } from './IngestStateLog.js';
import { natsIngestError } from './natsIngestError.js';
import { openIngestTarget } from './openIngestTarget.js';

/** One JetStream target as the writer uses it: its per-task subjects and its keys' state logs. */
export interface IngestTarget {
  readonly data: DataSubject;
  readonly log: IngestStateLog;
  /** The largest entry (payload and Nats-Msg-Id) the target takes. */
  readonly maxEntryBytes: number;
}

/** What a message's headers take besides the Nats-Msg-Id (the expectation and record headers, framing). */
const HEADER_ROOM = 1_024;

/** `connection`, waiting at most `timeoutMs` for one being opened. */
async function within(connection: NatsConnection | Promise<NatsConnection>, timeoutMs: number): Promise<NatsConnection> {
  if (!(connection instanceof Promise)) return connection;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no NATS connection within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([connection, late]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The target behind `jetStream` once the connection is open, the data stream is known to exist
 * and the state stream beside it does (openIngestTarget). Messages and record parts are sized to
 * the server's max_payload and the data stream's max_msg_size.
 */
export async function connectIngestTarget(
  connection: NatsConnection | Promise<NatsConnection>,
  jetStream: string,
  timeoutMs: number,
): Promise<{ ok: true; target: IngestTarget } | { ok: false; error: IngestError }> {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  try {
    nc = await within(connection, timeoutMs);
    jsm = await jetstreamManager(nc, { timeout: timeoutMs, checkAPI: false });
  } catch (error) {
    return { ok: false, error: natsIngestError(error, `opening JetStream ${jetStream}`) };
  }
  const js = jetstream(nc, { timeout: timeoutMs });
  const opened = await openIngestTarget(jsm, jetStream);
  if (!opened.ok) return opened;
  const maxPayload = nc.info?.max_payload ?? 1_048_576;
  const { maxMsgSize, stateStream } = opened.facts;
  return {
    ok: true,
    target: {
      data: new DataSubject(js, jsm, jetStream, timeoutMs),
      log: new IngestStateLog(js, jsm, stateStream, timeoutMs, maxPayload - HEADER_ROOM),
      maxEntryBytes: (maxMsgSize > 0 ? Math.min(maxMsgSize, maxPayload) : maxPayload) - HEADER_ROOM,
    },
  };
}
