import type { JetStreamTargetWriter, JetStreamTargetWriterOptions } from '../JetStreamTargetWriter.js';
import { jetStreamConnectionSource } from './jetStreamConnectionSource.js';
import { jetStreamSender } from './jetStreamSender.js';
import { publishErrorOfJetStream } from './publishErrorOfJetStream.js';

/**
 * createPublisher's writer for one JetStream target: the JetStream send of createJetStreamWriter
 * (jetStreamSender: `Nats-Msg-Id: <stream> <key>`, one attempt, the same error classification) on
 * a connection of its own, opened on the first write, with the errors answered as PublishError.
 * Loaded by a dynamic import (JetStreamTargetWriters); nothing in the main entry imports it.
 */
export function openJetStreamTargetWriter(options: JetStreamTargetWriterOptions): JetStreamTargetWriter {
  const { target, credentials, connectionName, timeoutMs } = options;
  const sender = jetStreamSender(
    jetStreamConnectionSource(
      {
        target,
        ...(credentials === undefined ? {} : { credentials }),
        ...(connectionName === undefined ? {} : { connectionName }),
      },
      timeoutMs,
    ),
  );
  return {
    async write(stream, data, idempotencyKey, writeTimeoutMs) {
      // createPublisher has no fence: `expectLastId` is createJetStreamWriter's (single-writer ingest).
      const result = await sender.send({ stream, data, idempotencyKey, expectedId: null, timeoutMs: writeTimeoutMs });
      return result.ok ? result : { ok: false, error: publishErrorOfJetStream(result.error) };
    },
    close: () => sender.close(),
  };
}
