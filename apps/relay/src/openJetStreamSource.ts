import type { Logger } from 'pino';
import { parseJetStreamTarget } from '@streamgate/protocol';
import type { RelayConfig } from './config.js';
import type { SourceListener } from './core/StreamSource.js';
import { JetStreamStreamSource } from './jetstream/JetStreamStreamSource.js';
import type { RelayMetrics } from './RelayMetrics.js';

/**
 * One allowlisted JetStream target's source, delivering to `listener` (its hub's), its errors,
 * reads, resets and reconnects logged and counted per target. Credentials come from the relay's
 * configuration, never from a token.
 */
export function openJetStreamSource(
  config: RelayConfig,
  target: string,
  metrics: RelayMetrics,
  log: Logger,
  listener: SourceListener,
): JetStreamStreamSource {
  const address = parseJetStreamTarget(target);
  // The allowlist holds normalized targets only (config.ts): this cannot be null there.
  if (address === null) throw new Error(`not a JetStream target: ${target}`);
  return new JetStreamStreamSource({
    target: address,
    ...(config.RELAY_NATS_USERNAME === undefined ? {} : { user: config.RELAY_NATS_USERNAME }),
    ...(config.RELAY_NATS_PASSWORD === undefined ? {} : { pass: config.RELAY_NATS_PASSWORD }),
    connectionName: `streamgate-relay:${config.RELAY_NODE_ID}`,
    listener,
    onError: (operation, error) => {
      metrics.jetStreamErrors.inc({ target, operation });
      log.warn({ err: error, operation, target }, 'jetstream error');
    },
    // The link logs the loss and the refusal once per outage (through onError); each further
    // attempt is counted, and logged only at debug, so a long outage does not flood the log.
    onConnectRetry: (error) => {
      metrics.jetStreamErrors.inc({ target, operation: 'connection' });
      log.debug({ err: error, target }, 'jetstream connection refused again');
    },
    onRead: (kind) => metrics.jetStreamReads.inc({ target, kind }),
    onRecreated: (stream, cause) => {
      metrics.jetStreamStreamResets.inc({ target, cause });
      log.warn({ stream, target, cause }, 'stream read again from its start on its JetStream target');
    },
    onReconnect: () => {
      metrics.jetStreamReconnects.inc({ target });
      log.info({ target }, 'jetstream connection back: watched streams read from their positions');
    },
  });
}
