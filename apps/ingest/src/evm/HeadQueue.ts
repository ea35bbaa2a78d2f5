import type { BlockHeader } from './rpcSchemas.js';

export type HeadItem = { readonly kind: 'head'; readonly head: BlockHeader } | { readonly kind: 'number'; readonly number: number };

/**
 * Live pushes and heads to catch up to, processed one at a time. Bounded: dropping the oldest is
 * safe, because any later head backfills everything it skipped over.
 */
export class HeadQueue {
  private readonly items: HeadItem[] = [];
  private wake: (() => void) | null = null;

  constructor(private readonly max: number) {}

  push(item: HeadItem): void {
    this.items.push(item);
    while (this.items.length > this.max) this.items.shift();
    this.wake?.();
  }

  get size(): number {
    return this.items.length;
  }

  /** The oldest item, waiting for one; undefined once `signal` aborts. */
  async next(signal: AbortSignal): Promise<HeadItem | undefined> {
    while (!signal.aborted) {
      const item = this.items[0];
      if (item !== undefined) return item;
      await new Promise<void>((resolve) => {
        const done = () => {
          signal.removeEventListener('abort', done);
          this.wake = null;
          resolve();
        };
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
    return undefined;
  }

  /** `item` was followed: removed, unless the bound already dropped it. */
  done(item: HeadItem): void {
    if (this.items[0] === item) this.items.shift();
  }

  /** A pushed head that keeps failing (its hash vanished in a reorg) is followed by its height instead. */
  replace(item: HeadItem, next: HeadItem): void {
    if (this.items[0] === item) this.items[0] = next;
  }
}
