/** Where a reporter of demand (a relay pod, the auth backend) records the streams it wants. */
export interface DemandSink {
  /** Marks `streams` as wanted for `ttlMs` from now; a shorter heartbeat never shortens a longer one. */
  heartbeat(streams: readonly string[], ttlMs: number): Promise<void>;
}
