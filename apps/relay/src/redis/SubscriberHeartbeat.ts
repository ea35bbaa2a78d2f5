import { toError } from './redisFailure.js';

/** How often a pub/sub connection is sent a PING. */
export const SUBSCRIBER_PING_MS = 1_000;
/**
 * A pub/sub connection that receives nothing this long after a command (its PING) is destroyed
 * by ioredis (`socketTimeout`) and reconnects: its channels are then subscribed again and its keys read.
 */
export const SUBSCRIBER_SOCKET_TIMEOUT_MS = 5_000;

/**
 * PINGs a pub/sub connection every SUBSCRIBER_PING_MS, one at a time. A connection whose peer is
 * gone without a FIN (a partition, a NAT or firewall that dropped an idle flow) still says
 * `ready` and delivers nothing: no notification is lost without a sign, since the unanswered
 * PING trips the connection's `socketTimeout` (SUBSCRIBER_SOCKET_TIMEOUT_MS), and the reconnect
 * reads every key from its position. The PINGs also keep an idle flow alive. Returns the stop.
 */
export function startHeartbeat(
  connection: { readonly status: string; ping(): Promise<unknown> },
  onError: (error: Error) => void,
): () => void {
  let outstanding = false;
  const timer = setInterval(() => {
    if (outstanding || connection.status !== 'ready') return;
    outstanding = true;
    connection.ping().then(
      () => (outstanding = false),
      (thrown: unknown) => {
        outstanding = false;
        onError(toError(thrown));
      },
    );
  }, SUBSCRIBER_PING_MS);
  timer.unref();
  return () => clearInterval(timer);
}
