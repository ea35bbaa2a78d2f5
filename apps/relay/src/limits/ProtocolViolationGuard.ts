/** Frames in a row refused as unusable (`frame_*` errors) after which a socket is closed with 4400. */
export const MAX_CONSECUTIVE_FRAME_ERRORS = 100;

/**
 * Decides when a socket has shown it speaks something other than the protocol. A client with a
 * bug that makes one bad frame now and then is answered and kept; one that sends nothing but
 * unusable frames (a wrong serializer, a loop resending garbage) would otherwise be answered
 * forever, at whatever rate it sends. Counting a run, not a rate, keeps a busy but mostly correct
 * client safe: any frame the relay can use ends the run.
 */
export class ProtocolViolationGuard {
  private run = 0;

  constructor(private readonly limit: number = MAX_CONSECUTIVE_FRAME_ERRORS) {}

  /** A frame the relay could not use; true when this one ends the socket. */
  refused(): boolean {
    this.run += 1;
    return this.run >= this.limit;
  }

  /** A frame the relay could parse (whatever its outcome). */
  usable(): void {
    this.run = 0;
  }
}
