import { afterEach, describe, expect, it, vi } from 'vitest';
import { startHeartbeat, SUBSCRIBER_PING_MS } from './SubscriberHeartbeat.js';

class FakeConnection {
  status = 'ready';
  sent = 0;
  private answers: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];

  ping(): Promise<'PONG'> {
    this.sent++;
    return new Promise((resolve, reject) => this.answers.push({ resolve: () => resolve('PONG'), reject }));
  }

  answer(error?: Error): void {
    const next = this.answers.shift();
    if (error === undefined) next?.resolve();
    else next?.reject(error);
  }
}

describe('startHeartbeat', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('PINGs a ready connection each interval, one at a time, and reports a failed PING', async () => {
    vi.useFakeTimers();
    const connection = new FakeConnection();
    const errors: Error[] = [];
    const stop = startHeartbeat(connection, (error) => errors.push(error));
    await vi.advanceTimersByTimeAsync(SUBSCRIBER_PING_MS);
    expect(connection.sent).toBe(1);
    // Unanswered (a silent peer: the socket timeout ends it): no second PING piles up.
    await vi.advanceTimersByTimeAsync(3 * SUBSCRIBER_PING_MS);
    expect(connection.sent).toBe(1);
    connection.answer(new Error('Connection is closed.'));
    await vi.advanceTimersByTimeAsync(0);
    expect(errors.map((e) => e.message)).toEqual(['Connection is closed.']);
    connection.status = 'reconnecting';
    await vi.advanceTimersByTimeAsync(2 * SUBSCRIBER_PING_MS);
    expect(connection.sent).toBe(1);
    connection.status = 'ready';
    await vi.advanceTimersByTimeAsync(SUBSCRIBER_PING_MS);
    expect(connection.sent).toBe(2);
    connection.answer();
    stop();
    await vi.advanceTimersByTimeAsync(5 * SUBSCRIBER_PING_MS);
    expect(connection.sent).toBe(2);
  });
});
