import type { Clock } from '@streamgate/protocol';

/** `promise`, or a rejection with `message` after `ms` on `clock` (the promise itself runs on). */
export function withTimeout<T>(clock: Clock, promise: Promise<T>, ms: number, message: string): Promise<T> {
  let cancel: () => void = () => undefined;
  const deadline = new Promise<never>((_, reject) => {
    cancel = clock.after(ms, () => reject(new Error(`${message} within ${ms} ms`)));
  });
  return Promise.race([promise, deadline]).finally(cancel);
}
