import { inspect } from 'node:util';
import { DeadlineError, withDeadline } from './withDeadline.js';

export interface WaitForOptions {
  /** Total time allowed, including the time each check takes. Default 5 000 ms. */
  timeoutMs?: number;
  /** Pause between checks. */
  intervalMs?: number;
  /**
   * What the test was waiting for; it leads the error message. A function is called at the
   * deadline, so a message can report how far things got (a count) then, not when waiting began.
   */
  message: string | (() => string);
}

/** What a check returns while its condition does not hold yet. */
type NotYet = undefined | null | false;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Polls `condition` until it returns something other than `false`, `undefined` or `null`, and
 * resolves with that value (a frame, a Redis reply), or rejects at the deadline. Tests use this
 * instead of fixed sleeps: they finish as soon as the condition holds and fail with a message
 * saying what never happened. A check that throws counts as "not yet" (a server that is still
 * starting makes its probes throw); the last such error is attached to the rejection so the cause
 * is not lost.
 */
export async function waitFor<T>(
  condition: () => T | NotYet | Promise<T | NotYet>,
  { timeoutMs = 5_000, intervalMs = 20, message }: WaitForOptions,
): Promise<Exclude<T, NotYet>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    try {
      // A check that hangs must not outlive the deadline.
      const value = await withDeadline(Promise.resolve().then(condition), remaining, 'the check');
      if (isDone(value)) return value;
    } catch (error) {
      if (error instanceof DeadlineError) break;
      lastError = error;
    }
    const pause = Math.min(intervalMs, deadline - Date.now());
    if (pause > 0) await sleep(pause);
  }
  const detail =
    lastError === undefined ? '' : `; last check threw: ${lastError instanceof Error ? lastError.message : inspect(lastError)}`;
  const said = typeof message === 'string' ? message : message();
  throw new DeadlineError(`${said}${detail}`, timeoutMs, { cause: lastError });
}

function isDone<T>(value: T | NotYet): value is Exclude<T, NotYet> {
  return value !== undefined && value !== null && value !== false;
}
