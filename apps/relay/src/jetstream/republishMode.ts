import { jetStreamRepublish } from '@streamgate/protocol';
import type { Republish } from '@nats-io/jetstream';

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
  const oneToken = { src: `${jetStream}.*`, dest: `${expected.dest.slice(0, -1)}*` };
  const matches =
    (republish.src === expected.src && republish.dest === expected.dest) ||
    (republish.src === oneToken.src && republish.dest === oneToken.dest);
  if (!matches) return 'none';
  return republish.headers_only === true ? 'headers' : 'live';
}
