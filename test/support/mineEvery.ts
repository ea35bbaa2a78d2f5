import type { AnvilNode } from '@streamgate/testkit';

export interface Miner {
  /** The newest block mined so far (0 before the first). */
  head(): number;
  /** Stops mining; resolves with the head, or rejects with the error that stopped mining early. */
  stop(): Promise<number>;
}

/**
 * Mines one block every `everyMs` until stopped. A failed mine stops the loop and is kept for
 * `stop()`, so the head stops growing (waits on it fail by their deadline) and the cause is not lost.
 */
export function mineEvery(anvil: AnvilNode, everyMs: number): Miner {
  let running = true;
  let head = 0;
  let failure: unknown;
  const loop = (async () => {
    try {
      while (running) {
        head = await anvil.mine(1);
        await new Promise((resolve) => setTimeout(resolve, everyMs));
      }
    } catch (error) {
      failure = error;
    }
  })();
  return {
    head: () => head,
    stop: async () => {
      running = false;
      await loop;
      if (failure !== undefined) throw new Error('mining failed', { cause: failure });
      return head;
    },
  };
}
