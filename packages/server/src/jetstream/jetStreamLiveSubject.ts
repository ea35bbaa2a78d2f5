import { jetStreamSubject } from '@streamgate/protocol';
import type { StreamName } from '@streamgate/protocol';

/*
 * Proposed for @streamgate/protocol, beside jetStreamSubject: the relay's JetStream source
 * subscribes to these subjects (apps/relay/src/jetstream/jetStreamRepublish.ts spells the same
 * mapping) and the writer's stream republishes onto them, so both sides should read it from one
 * place. It lives here until that change is made.
 */

/** Where a JetStream stream republishes what it stores; relays subscribe below it. */
export const JETSTREAM_LIVE_PREFIX = '$SG.live';

/**
 * The subject on which a stored message of per-task stream `name` is republished live:
 * `$SG.live.<JetStream stream>.<name, . written %2E>`. Relays subscribe to it to deliver entries
 * without reading the stream; the republished message carries the stream sequence in its
 * `Nats-Sequence` header (and `Nats-Last-Sequence`, the subject's previous one).
 */
export function jetStreamLiveSubject(jetStream: string, name: StreamName): string {
  return `${JETSTREAM_LIVE_PREFIX}.${jetStreamSubject(jetStream, name)}`;
}

/** The stream's `republish` setting that produces jetStreamLiveSubject for every stored message. */
export function jetStreamRepublish(jetStream: string): { src: string; dest: string } {
  return { src: `${jetStream}.>`, dest: `${JETSTREAM_LIVE_PREFIX}.${jetStream}.>` };
}
