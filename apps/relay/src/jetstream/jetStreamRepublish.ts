import { jetStreamSubject } from '@streamgate/protocol';
import type { StreamName } from '@streamgate/protocol';
import type { Republish } from '@nats-io/jetstream';

/**
 * Where the relay hears a JetStream stream's writes: the stream is configured to republish every
 * stored message on core NATS, `<STREAM>.<token>` to `$SG.live.<STREAM>.<token>`, with the
 * headers Nats-Stream, Nats-Subject, Nats-Sequence and Nats-Last-Sequence (nats-server ≥ 2.8.3;
 * checked against 2.9.10 by JetStreamStreamSource.test.ts). The destination lies outside the
 * stream's own subjects (the server refuses a republish that would be stored again) and under
 * `$SG`, a prefix of streamgate's own, so no application subject collides with it.
 */
export function jetStreamRepublish(jetStream: string): Republish {
  return { src: `${jetStream}.>`, dest: `${LIVE_PREFIX}.${jetStream}.>` };
}

/** The core NATS subject on which `stream`'s writes are republished. */
export function jetStreamLiveSubject(jetStream: string, stream: StreamName): string {
  return `${LIVE_PREFIX}.${jetStreamSubject(jetStream, stream)}`;
}

/**
 * How a JetStream stream's configured republish serves the relay: `live`, messages with their
 * payload on jetStreamLiveSubject; `headers`, the same without payload (`headers_only`), so each
 * is a hint that costs a read; `none`, no republish the relay can hear (missing, or mapped
 * elsewhere), so the source reads by polling.
 */
export type RepublishMode = 'live' | 'headers' | 'none';

export function republishMode(jetStream: string, republish: Republish | undefined): RepublishMode {
  if (republish === undefined) return 'none';
  const expected = jetStreamRepublish(jetStream);
  // `<STREAM>.*` maps exactly as `<STREAM>.>` does for the one-token subjects the relay reads.
  const oneToken = { src: `${jetStream}.*`, dest: `${LIVE_PREFIX}.${jetStream}.*` };
  const matches =
    (republish.src === expected.src && republish.dest === expected.dest) ||
    (republish.src === oneToken.src && republish.dest === oneToken.dest);
  if (!matches) return 'none';
  return republish.headers_only === true ? 'headers' : 'live';
}

const LIVE_PREFIX = '$SG.live';
