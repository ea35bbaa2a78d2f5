import { RequestError } from '@nats-io/transport-node';

/** `error` and its causes, outermost first (a few levels: the NATS clients nest two or three). */
export function errorCauses(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < 5; current = current.cause) chain.push(current);
  return chain;
}

export function hasCause(error: unknown, kind: abstract new (...args: never[]) => Error): boolean {
  return errorCauses(error).some((cause) => cause instanceof kind);
}

/**
 * NATS answered "no responders": nothing subscribes to the subject (no stream holds it, or no
 * JetStream for an API subject). The JetStream client wraps the core RequestError as "jetstream is
 * not enabled" (a class it does not export); the RequestError stays in the cause chain.
 */
export function isNoResponders(error: unknown): boolean {
  return errorCauses(error).some(
    (cause) => (cause instanceof RequestError && cause.isNoResponders()) || cause.name === 'NoRespondersError',
  );
}
