/**
 * A client socket as the core sees it. The uWS edge implements it; topics map onto uWS pub/sub
 * so that one publish reaches every live subscriber of a stream on the pod.
 */
export interface Connection {
  /** Sends one text frame. Returns false when the frame could not be queued (backpressure limit). */
  send(frame: string): boolean;
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  /** Bytes queued for this socket and not yet written. */
  bufferedAmount(): number;
  /**
   * Runs `fn` at once, batching the sends made inside it into as few writes as possible. On a
   * closed socket it still runs (its sends are no-ops): what `fn` does besides sending must happen.
   */
  cork(fn: () => void): void;
  close(code: number, reason: string): void;
  readonly closed: boolean;
}

/** The pod's topics: one publish of a serialized frame reaches every socket subscribed to it. */
export interface TopicPublisher {
  publish(topic: string, frame: string): void;
  /** Sockets on `topic` now; the hub counts deliveries with it instead of a count from publish. */
  subscriberCount(topic: string): number;
}
