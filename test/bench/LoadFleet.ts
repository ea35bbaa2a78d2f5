import { fork } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { decodeFromCompressedBase64 } from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';
import { newLatencyHistogram } from './latencyHistogram.js';
import { repoRoot, tsxLoaderUrl, withDeadline } from '@streamgate/testkit';
import { WorkerReply } from './loadgen/messages.js';
import type { WorkerCommand, WorkerStats } from './loadgen/messages.js';
import type { ServerKind } from './loadgen/protocols.js';

export interface FleetStats {
  received: number;
  ready: number;
  open: number;
  errors: number;
  gaps: number;
  duplicates: number;
  histogram: Histogram | null;
  /** Latency from each entry's write (its id's time), where frames carry ids (LoadTotals.fromWrite). */
  fromWrite: Histogram | null;
  backAt: number[];
}

interface Worker {
  readonly child: ChildProcess;
  readonly waiting: Array<(reply: WorkerReply) => void>;
}

/** The load generator: a few processes of raw WebSocket clients, one histogram merged from all. */
export class LoadFleet {
  private constructor(private readonly workers: Worker[]) {}

  static start(count: number): LoadFleet {
    const entry = join(repoRoot(), 'test/bench/loadgen/loadWorker.ts');
    const gcPreload = pathToFileURL(join(repoRoot(), 'test/bench/servers/gcOnSignal.ts')).href;
    const workers = Array.from({ length: count }, (): Worker => {
      const child = fork(entry, [], {
        // SIGUSR2 runs a full GC (gcOnSignal), as in the servers: see collectGarbage.
        execArgv: [
          '--conditions=streamgate-source',
          '--import',
          tsxLoaderUrl(),
          '--max-old-space-size=2048',
          '--expose-gc',
          '--import',
          gcPreload,
        ],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const worker: Worker = { child, waiting: [] };
      child.on('message', (raw: unknown) => {
        const parsed = WorkerReply.safeParse(raw);
        if (!parsed.success) {
          process.stderr.write(`load worker sent a bad reply: ${parsed.error.message}\n`);
          return;
        }
        worker.waiting.shift()?.(parsed.data);
      });
      return worker;
    });
    return new LoadFleet(workers);
  }

  /**
   * A full GC in every worker, before a workload's steps: a worker lives through every workload,
   * and the garbage of one (80,000 frames at 10k/s) collected in the next delayed its receipts,
   * which the latency figures took for the server's (the relay's p99 at 10,000 × 1 at 1k/s was
   * 12–57 ms in a full run, 2–7 ms run alone or with this collection, its loop free of long tasks).
   */
  collectGarbage(): void {
    for (const w of this.workers) w.child.kill('SIGUSR2');
  }

  get pids(): number[] {
    return this.workers.map((w) => w.child.pid ?? 0);
  }

  /** Opens clients (each a list of stream indices), spread over the workers; resolves when all are subscribed. */
  async open(options: {
    kind: ServerKind;
    port: number;
    streams: string[];
    tokens: string[];
    clients: number[][];
    trackSeq: boolean;
    reconnect: boolean;
    timeoutMs: number;
  }): Promise<{ ready: number; failed: number }> {
    const shares = this.workers.map((_, w) => options.clients.filter((_c, i) => i % this.workers.length === w));
    const replies = await Promise.all(
      this.workers.map((worker, w) =>
        this.request(worker, { type: 'open', ...options, clients: shares[w] ?? [] }, options.timeoutMs + 10_000),
      ),
    );
    let ready = 0;
    let failed = 0;
    for (const r of replies) {
      if (r.type !== 'opened') continue;
      ready += r.ready;
      failed += r.failed;
    }
    return { ready, failed };
  }

  async reset(since: number): Promise<void> {
    await Promise.all(this.workers.map((w) => this.request(w, { type: 'reset', since })));
  }

  async stats(histogram: boolean, lastSeq?: number[]): Promise<FleetStats> {
    const replies = await Promise.all(this.workers.map((w) => this.request(w, { type: 'stats', histogram, lastSeq })));
    const total: FleetStats = {
      received: 0,
      ready: 0,
      open: 0,
      errors: 0,
      gaps: 0,
      duplicates: 0,
      histogram: null,
      fromWrite: null,
      backAt: [],
    };
    if (histogram) total.histogram = newLatencyHistogram();
    for (const reply of replies) {
      if (reply.type !== 'stats') continue;
      addStats(total, reply);
    }
    return total;
  }

  async retarget(port: number): Promise<void> {
    await Promise.all(this.workers.map((w) => this.request(w, { type: 'retarget', port })));
  }

  async closeAll(): Promise<void> {
    await Promise.all(this.workers.map((w) => this.request(w, { type: 'closeAll' })));
  }

  stop(): void {
    for (const w of this.workers) w.child.kill('SIGKILL');
  }

  private request(worker: Worker, command: WorkerCommand, timeoutMs = 30_000): Promise<WorkerReply> {
    const reply = new Promise<WorkerReply>((resolve) => worker.waiting.push(resolve));
    worker.child.send(command);
    return withDeadline(reply, timeoutMs, `load worker did not answer ${command.type}`);
  }
}

function addStats(total: FleetStats, reply: WorkerStats): void {
  total.received += reply.received;
  total.ready += reply.ready;
  total.open += reply.open;
  total.errors += reply.errors;
  total.gaps += reply.gaps;
  total.duplicates += reply.duplicates;
  total.backAt.push(...reply.backAt);
  if (reply.histogram !== null && total.histogram !== null) total.histogram.add(decodeFromCompressedBase64(reply.histogram));
  if (reply.fromWrite !== null) (total.fromWrite ??= newLatencyHistogram()).add(decodeFromCompressedBase64(reply.fromWrite));
}
