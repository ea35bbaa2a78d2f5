/**
 * At most `max` requests out at once, the rest waiting in the order they came. A request's own
 * timeout starts when it is sent, not while it waits: a burst of reads (every stream of a
 * JetStream target subscribed at once, four requests each) is answered at the rate the stream's
 * leader serves them, instead of all going out together and the late ones timing out in the
 * leader's queue.
 */
export class RequestGate {
  private out = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`RequestGate needs a positive integer, got ${max}`);
  }

  async run<T>(request: () => Promise<T>): Promise<T> {
    if (this.out >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.out++;
    try {
      return await request();
    } finally {
      // The slot passes to the next in line, if any, without being given up in between.
      const next = this.waiting.shift();
      if (next === undefined) this.out--;
      else next();
    }
  }
}
