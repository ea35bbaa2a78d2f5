import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { Subscription, SubscriptionError, RecoveryInfo } from '@streamgate/client';
import type { StreamId } from '@streamgate/protocol';
import type { DemoEvent } from '@streamgate/auth';
import type { Fleet } from './startFleet.js';

/** A client subscription that records everything it receives, for sequence checks. */
export interface Recorder {
  readonly client: RelayClient;
  readonly sub: Subscription<DemoEvent>;
  readonly seqs: number[];
  readonly ids: StreamId[];
  readonly errors: SubscriptionError[];
  readonly recoveries: RecoveryInfo[];
  close(): void;
}

export function record(
  fleet: Fleet,
  urls: readonly string[],
  stream: string,
  options: { user?: string; from?: StreamId; client?: RelayClient } = {},
): Recorder {
  const client = options.client ?? new RelayClient({ urls, WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
  const seqs: number[] = [];
  const ids: StreamId[] = [];
  const errors: SubscriptionError[] = [];
  const recoveries: RecoveryInfo[] = [];
  const sub = client.subscribe({
    getToken: () => fleet.trpc.demo.token.query({ stream, user: options.user ?? 'alice' }),
    ...(options.from === undefined ? {} : { from: options.from }),
    onEvent: (data, meta) => {
      seqs.push(data.seq);
      ids.push(meta.id);
    },
    onError: (error) => errors.push(error),
    onRecovery: (info) => recoveries.push(info),
  });
  return { client, sub, seqs, ids, errors, recoveries, close: () => client.close() };
}

/** Asserts `seqs` is exactly `from, from+1, …, to-1`: in order, nothing missing, nothing twice. */
export function gapsAndDuplicates(seqs: readonly number[], from: number, to: number): string | null {
  if (seqs.length !== to - from) {
    const seen = new Set(seqs);
    const missing = [];
    for (let i = from; i < to && missing.length < 5; i++) if (!seen.has(i)) missing.push(i);
    return `expected ${to - from} events, got ${seqs.length} (first missing: ${missing.join(',') || 'none'}; duplicates: ${seqs.length - seen.size})`;
  }
  for (let i = 0; i < seqs.length; i++) {
    if (seqs[i] !== from + i) return `position ${i}: expected seq ${from + i}, got ${seqs[i]}`;
  }
  return null;
}
