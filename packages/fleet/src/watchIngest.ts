import { z } from 'zod';

/** One change in what an ingest worker reports, worded for a terminal. */
export type IngestChange =
  | { kind: 'owned'; streams: number }
  | { kind: 'state'; stream: string; state: string }
  | { kind: 'failover'; stream: string; from: string; to: string; total: number }
  | { kind: 'failback'; stream: string; from: string; to: string }
  | { kind: 'venue'; venue: string; covered: number; wanted: number; sessions: number }
  | { kind: 'unreachable'; message: string };

export interface IngestWatchOptions {
  /** `http://127.0.0.1:<port>` of the worker. */
  httpUrl: string;
  /** Venues whose coverage to follow (`GET /venues/<name>`). */
  venues?: readonly string[];
  intervalMs?: number;
  onChange: (change: IngestChange) => void;
}

export interface IngestWatch {
  /** Failovers per stream seen so far (sum over providers). */
  failovers(stream: string): number;
  /** The last state each stream was reported in. */
  state(stream: string): string | undefined;
  stop(): void;
}

type Sample = { name: string; labels: Record<string, string>; value: number };

/** The samples of a Prometheus text exposition (comments skipped). */
export function parseMetrics(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[pair[1] ?? ''] = pair[2] ?? '';
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

const venueStatusSchema = z.looseObject({
  wanted: z.number(),
  covered: z.number(),
  shards: z.array(z.looseObject({ connected: z.boolean() })),
});

/**
 * Polls a worker's /metrics (and venue status) and reports what changed: streams owned, each
 * stream's failover state, failovers with the providers they went between, venue coverage. The
 * fleet prints these so a newcomer sees a cut provider's failover in the terminal.
 */
export function watchIngest(options: IngestWatchOptions): IngestWatch {
  let owned: number | undefined;
  const states = new Map<string, string>();
  const failoverCounts = new Map<string, number>();
  const failbackCounts = new Map<string, number>();
  const venues = new Map<string, string>();
  let unreachable = false;
  let stopped = false;

  const poll = async (): Promise<void> => {
    const samples = parseMetrics(await (await fetch(`${options.httpUrl}/metrics`)).text());
    for (const s of samples) {
      if (s.name === 'ingest_owned_streams' && s.value !== owned) {
        owned = s.value;
        options.onChange({ kind: 'owned', streams: s.value });
      }
      const stream = s.labels.stream;
      if (stream === undefined) continue;
      if (s.name === 'ingest_stream_state' && s.value === 1 && s.labels.state !== undefined && states.get(stream) !== s.labels.state) {
        states.set(stream, s.labels.state);
        options.onChange({ kind: 'state', stream, state: s.labels.state });
      }
      if (s.name === 'ingest_failovers_total') {
        const key = `${stream}\u0000${s.labels.from ?? ''}\u0000${s.labels.to ?? ''}`;
        if (s.value > (failoverCounts.get(key) ?? 0)) {
          failoverCounts.set(key, s.value);
          options.onChange({ kind: 'failover', stream, from: s.labels.from ?? '?', to: s.labels.to ?? '?', total: s.value });
        }
      }
      if (s.name === 'ingest_failbacks_total') {
        const key = `${stream}\u0000${s.labels.from ?? ''}\u0000${s.labels.to ?? ''}`;
        if (s.value > (failbackCounts.get(key) ?? 0)) {
          failbackCounts.set(key, s.value);
          options.onChange({ kind: 'failback', stream, from: s.labels.from ?? '?', to: s.labels.to ?? '?' });
        }
      }
    }
    for (const venue of options.venues ?? []) {
      const res = await fetch(`${options.httpUrl}/venues/${venue}`);
      // 404: this worker does not hold the venue (yet).
      if (res.status !== 200) {
        await res.body?.cancel();
        continue;
      }
      const status = venueStatusSchema.parse(await res.json());
      const change = { kind: 'venue', venue, covered: status.covered, wanted: status.wanted, sessions: status.shards.length } as const;
      const key = JSON.stringify(change);
      if (venues.get(venue) !== key) {
        venues.set(venue, key);
        options.onChange(change);
      }
    }
  };

  const tick = (): void => {
    poll().then(
      () => {
        unreachable = false;
        schedule();
      },
      (error: unknown) => {
        // Said once per outage: a stopped worker would otherwise repeat it every interval.
        if (!unreachable && !stopped)
          options.onChange({ kind: 'unreachable', message: error instanceof Error ? error.message : String(error) });
        unreachable = true;
        schedule();
      },
    );
  };
  let timer: NodeJS.Timeout | undefined;
  const schedule = (): void => {
    if (stopped) return;
    timer = setTimeout(tick, options.intervalMs ?? 500);
    timer.unref();
  };
  tick();

  return {
    failovers: (stream) => [...failoverCounts].filter(([key]) => key.startsWith(`${stream}\u0000`)).reduce((sum, [, n]) => sum + n, 0),
    state: (stream) => states.get(stream),
    stop: () => {
      stopped = true;
      clearTimeout(timer);
    },
  };
}

/** The change as one terminal line. */
export function describeIngestChange(change: IngestChange): string {
  switch (change.kind) {
    case 'owned':
      return `owns ${change.streams} stream(s)`;
    case 'state':
      return `${change.stream} ${change.state}`;
    case 'failover':
      return `${change.stream} failover ${change.from} → ${change.to} (${change.total} so far on this pair)`;
    case 'failback':
      return `${change.stream} back on its preferred provider ${change.to} (from ${change.from}, after the failback hold-down)`;
    case 'venue':
      return `venue ${change.venue}: ${change.covered}/${change.wanted} symbols covered on ${change.sessions} session(s)`;
    case 'unreachable':
      return `metrics unreachable: ${change.message}`;
  }
}
