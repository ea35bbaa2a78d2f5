import { describe, expect, it } from 'vitest';
import { waitFor } from './waitFor.js';
import { DeadlineError, withDeadline } from './withDeadline.js';

describe('waitFor', () => {
  it('resolves as soon as the condition holds', async () => {
    let calls = 0;
    await waitFor(() => ++calls >= 3, { timeoutMs: 1_000, intervalMs: 5, message: 'three calls' });
    expect(calls).toBe(3);
  });

  it('resolves with the first value that is not false, undefined or null', async () => {
    const replies: (string | null | undefined | false)[] = [undefined, null, false, 'frame', 'later'];
    const value: string = await waitFor(() => replies.shift(), { timeoutMs: 1_000, intervalMs: 1, message: 'a frame' });
    expect(value).toBe('frame');
    expect(replies).toEqual(['later']);
    await expect(waitFor(() => Promise.resolve(0), { timeoutMs: 1_000, message: 'zero' })).resolves.toBe(0);
  });

  it('rejects with its message at the deadline, not before', async () => {
    const started = Date.now();
    const error: unknown = await waitFor(() => false, { timeoutMs: 150, message: 'the impossible' }).catch((e: unknown) => e);
    const elapsed = Date.now() - started;
    expect(error).toBeInstanceOf(DeadlineError);
    expect((error as Error).message).toContain('the impossible');
    expect(elapsed).toBeGreaterThanOrEqual(140);
    expect(elapsed).toBeLessThan(1_000);
  });

  it('calls a message function at the deadline, so it says how far things got then', async () => {
    let live = 0;
    const waiting = waitFor(() => false, { timeoutMs: 50, message: () => `not every subscription went live (${live}/10)` });
    live = 7; // changed after the call: a message built then would still say 0
    const error: unknown = await waiting.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineError);
    expect((error as Error).message).toMatch(/^not every subscription went live \(7\/10\)/);
  });

  it('treats a throwing check as not yet and reports the last error', async () => {
    const error: unknown = await waitFor(
      async () => {
        await Promise.resolve();
        throw new Error('connection refused');
      },
      { timeoutMs: 100, message: 'server up' },
    ).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/server up; last check threw: connection refused/);
  });

  it('does not let a hanging check outlive the deadline', async () => {
    const error: unknown = await waitFor(() => new Promise<boolean>(() => undefined), {
      timeoutMs: 100,
      message: 'hangs',
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeadlineError);
  });
});

describe('withDeadline', () => {
  it('passes a value through', async () => {
    await expect(withDeadline(Promise.resolve(7), 100, 'seven')).resolves.toBe(7);
  });

  it('rejects with the message when the promise is late', async () => {
    await expect(withDeadline(new Promise(() => undefined), 50, 'never settles')).rejects.toThrow(/never settles/);
  });
});
