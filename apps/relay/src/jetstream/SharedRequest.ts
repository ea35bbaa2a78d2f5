interface Waiting<T> {
  readonly promise: Promise<T>;
  readonly resolve: (value: T) => void;
  readonly reject: (error: unknown) => void;
}

function waiting<T>(): Waiting<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * One request answering everyone who asked while none was being sent, invariant first: every
 * answer comes from a request sent at or after the ask. Whoever asks while a request is out waits
 * for the next one, which goes out once that one is answered and serves every ask made meanwhile.
 * So a burst of thousands of asks (a relay subscribing every stream of a JetStream target at
 * once) costs two requests, not thousands, and no caller gets a state older than its question.
 */
export class SharedRequest<T> {
  private next: Waiting<T> | null = null;
  private sending = false;

  constructor(private readonly send: () => Promise<T>) {}

  ask(): Promise<T> {
    this.next ??= waiting<T>();
    const answer = this.next.promise;
    this.pump();
    return answer;
  }

  private pump(): void {
    if (this.sending || this.next === null) return;
    const batch = this.next;
    this.next = null;
    this.sending = true;
    this.send()
      .then(batch.resolve, batch.reject)
      .finally(() => {
        this.sending = false;
        this.pump();
      });
  }
}
