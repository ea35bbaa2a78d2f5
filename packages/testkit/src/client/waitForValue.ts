import { waitFor } from '../waitFor.js';

export interface WaitForValueOptions {
  /** Default 5 s. */
  timeoutMs?: number;
  /** Pause between checks; default 5 ms, since scripted peers answer within a turn or two. */
  intervalMs?: number;
}

/**
 * `waitFor` for a value: polls `probe` until it returns something other than undefined or false
 * and returns that, so a test can wait for a frame and then read it. The polling, the deadline
 * and the error are `waitFor`'s.
 */
export async function waitForValue<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  { timeoutMs = 5_000, intervalMs = 5 }: WaitForValueOptions = {},
): Promise<T> {
  let found: { value: T } | undefined;
  await waitFor(
    async () => {
      const value = await probe();
      if (value === undefined || value === false) return false;
      found = { value };
      return true;
    },
    { timeoutMs, intervalMs, message: `waiting for ${what}` },
  );
  if (found === undefined) throw new Error(`waitFor returned without ${what}`);
  return found.value;
}
