export type TimeoutTimer = { readonly promise: Promise<'timeout'>; clear(): void };

/** A promise that resolves to 'timeout' after `ms`, for Promise.race; clear() when the race is over. */
export function timeoutAfter(ms: number): TimeoutTimer {
  let handle: NodeJS.Timeout | undefined;
  const promise = new Promise<'timeout'>((resolve) => {
    handle = setTimeout(() => resolve('timeout'), ms);
  });
  return { promise, clear: () => clearTimeout(handle) };
}
