import { jetStreamRepublish } from '@streamgate/protocol';

/**
 * The JetStream stream republishes nothing the relay can hear: live entries would never arrive.
 * The source reports this and reads every watched stream by polling until the stream is
 * configured with jetStreamRepublish; it never falls back silently.
 */
export class RepublishMissingError extends Error {
  override readonly name = 'RepublishMissingError';

  constructor(readonly jetStream: string) {
    const expected = jetStreamRepublish(jetStream);
    super(`JetStream stream ${jetStream} has no republish {src: "${expected.src}", dest: "${expected.dest}"}: watched streams are polled`);
  }
}
