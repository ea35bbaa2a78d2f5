import type { StreamName } from './streamName.js';

/**
 * A per-task stream on a JetStream target is the subject `<JetStream stream>.<token>`, one token
 * per stream name. Names allow `.`, which separates subject tokens, so it is written `%2E`; no
 * other name character is special to NATS, and `%` is not a name character, so the mapping is
 * one to one. The JetStream stream is created with the subjects `<JetStream stream>.*`.
 */
export function jetStreamSubject(jetStream: string, stream: StreamName): string {
  return `${jetStream}.${stream.replaceAll('.', '%2E')}`;
}

/** The stream name a subject of `jetStream` holds, or null when it holds none. */
export function streamOfJetStreamSubject(jetStream: string, subject: string): StreamName | null {
  const prefix = `${jetStream}.`;
  if (!subject.startsWith(prefix)) return null;
  const token = subject.slice(prefix.length);
  if (token === '' || token.includes('.')) return null;
  const name = token.replaceAll('%2E', '.');
  return /^[A-Za-z0-9_.:{}\-/]{1,200}$/.test(name) && !name.includes('%') ? name : null;
}

/**
 * Where the JetStream stream republishes each stored message of `stream` (its `republish` is
 * `{ src: '<JetStream stream>.>', dest: '$SG.live.<JetStream stream>.>' }`): relays subscribe to
 * it per watched stream, and the headers `Nats-Sequence` and `Nats-Last-Sequence` (the subject's
 * previous sequence) say whether a message follows a relay's position with no gap, whoever wrote it.
 */
export function jetStreamLiveSubject(jetStream: string, stream: StreamName): string {
  return `$SG.live.${jetStreamSubject(jetStream, stream)}`;
}

/** The `republish` a JetStream stream holding per-task streams is created with. */
export function jetStreamRepublish(jetStream: string): { readonly src: string; readonly dest: string } {
  return { src: `${jetStream}.>`, dest: `$SG.live.${jetStream}.>` };
}
