import type { Publisher } from './Publisher.js';

/** Where publishing stands across steps: the next stream in turn and each stream's next sequence number. */
export interface PublishState {
  readonly streams: readonly string[];
  readonly seq: number[];
  next: number;
}

export function publishState(streams: readonly string[]): PublishState {
  return { streams, seq: streams.map(() => 0), next: 0 };
}

export const nowMs = (): number => performance.timeOrigin + performance.now();

/**
 * Open-loop publishing: event k is due at `startMs + k / rate` whatever happened to earlier ones,
 * and carries that intended time. A publisher or server that falls behind therefore shows up as
 * latency instead of silently lowering the rate (no coordinated omission).
 */
export async function publishOpenLoop(
  publisher: Publisher,
  state: PublishState,
  eventsPerSecond: number,
  startMs: number,
  durationMs: number,
  stop: () => boolean = () => false,
): Promise<number> {
  const total = Math.max(1, Math.round((eventsPerSecond * durationMs) / 1000));
  const interval = 1000 / eventsPerSecond;
  let k = 0;
  while (k < total && !stop()) {
    const due = Math.min(total, Math.floor((nowMs() - startMs) / interval) + 1);
    for (; k < due; k++) {
      const stream = state.next;
      state.next = (stream + 1) % state.streams.length;
      const seq = state.seq[stream] ?? 0;
      state.seq[stream] = seq + 1;
      publisher.publish(state.streams[stream] ?? '', seq, startMs + k * interval);
    }
    publisher.flush();
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return k;
}
