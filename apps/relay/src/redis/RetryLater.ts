import { backoffDelay } from '@streamgate/protocol';
import type { StreamName } from '@streamgate/protocol';
import { sleepOn } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';

/**
 * Keys whose read did not reach an answer (their node's connection failed, or it missed the
 * round's deadline): handed back to be read again after a bounded full-jitter backoff, so a dead
 * or frozen primary is retried at a bounded rate while the other nodes' keys are read as usual.
 * Their positions are untouched, so a retry reads exactly what the lost read would have.
 */
export class RetryLater {
  /** Key → whether an `xadd` woke it (kept, so a retry that reads nothing still raises suspicion). */
  private readonly keys = new Map<StreamName, boolean>();
  private failures = 0;
  private scheduled = false;
  private running = true;

  constructor(
    private readonly clock: Clock,
    private readonly due: (key: StreamName, woken: boolean) => void,
  ) {}

  get size(): number {
    return this.keys.size;
  }

  /** A round had keys whose read failed: they are read again after the next backoff step. */
  add(failed: ReadonlyArray<readonly [StreamName, boolean]>): void {
    if (failed.length === 0) return;
    for (const [key, woken] of failed) this.keys.set(key, woken || this.keys.get(key) === true);
    this.failures++;
    if (!this.scheduled) void this.flushLater();
  }

  /** A round whose reads all reached an answer, with nothing waiting here: the backoff starts over. */
  answered(): void {
    if (this.keys.size === 0 && !this.scheduled) this.failures = 0;
  }

  delete(key: StreamName): void {
    this.keys.delete(key);
  }

  close(): void {
    this.running = false;
  }

  private async flushLater(): Promise<void> {
    this.scheduled = true;
    await sleepOn(this.clock, backoffDelay(this.failures, 50, 1_000));
    this.scheduled = false;
    if (!this.running) return;
    const due = [...this.keys];
    this.keys.clear();
    for (const [key, woken] of due) this.due(key, woken);
  }
}
