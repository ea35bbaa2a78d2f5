import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { StreamWriter } from '@streamgate/ingest-core';
import { JetStreamStreamWriter } from '@streamgate/ingest-core/jetstream';
import type { IngestJetStreamConfig } from './ingestJetStreamConfig.js';
import { IngestNatsLink } from './IngestNatsLink.js';

export interface IngestJetStream {
  readonly writer: StreamWriter;
  /** For /readyz: the target and whether its connection is up. */
  readiness(): { target: string; connected: boolean };
  close(): Promise<void>;
}

/** The writer of every stream when INGEST_JETSTREAM_TARGET is set, over one NATS connection opened in the background. */
export function openIngestJetStream(config: IngestJetStreamConfig, workerId: string, log: Logger, registry: Registry): IngestJetStream {
  const link = new IngestNatsLink(config, workerId, log, registry);
  const writer = new JetStreamStreamWriter({ connection: link.connection, jetStream: config.address.stream, log });
  return {
    writer,
    readiness: () => ({ target: link.target, connected: link.connected }),
    close: () => link.close(),
  };
}
