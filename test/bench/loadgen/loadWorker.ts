import { encodeIntoCompressedBase64 } from 'hdr-histogram-js';
import { LoadClient, newLoadTotals } from './LoadClient.js';
import { WorkerCommand } from './messages.js';
import type { WorkerReply } from './messages.js';
import { PROTOCOLS } from './protocols.js';

// A load generator process: many raw WebSocket clients, driven by the orchestrator over IPC.

let totals = newLoadTotals();
let clients: LoadClient[] = [];
let clientStreams: number[][] = [];

// Handshakes in flight per worker: enough to open 10k clients in seconds, few enough not to
// make the server's accept queue the thing measured.
const OPEN_CONCURRENCY = 200;

function reply(message: WorkerReply): void {
  process.send?.(message);
}

async function openAll(command: Extract<WorkerCommand, { type: 'open' }>): Promise<void> {
  const protocol = PROTOCOLS[command.kind];
  clientStreams = command.clients;
  let ready = 0;
  let next = 0;
  let pending = 0;
  await new Promise<void>((resolve) => {
    const deadline = setTimeout(resolve, command.timeoutMs);
    const startMore = (): void => {
      while (pending < OPEN_CONCURRENCY && next < command.clients.length) {
        const indices = command.clients[next++] ?? [];
        const subs = indices.map((i) => ({ stream: command.streams[i] ?? '', token: command.tokens[i], from: undefined }));
        let counted = false;
        const client = new LoadClient(command.port, protocol, subs, totals, {
          trackSeq: command.trackSeq,
          trackId: command.trackSeq && command.kind === 'relay',
          reconnect: command.reconnect,
          onReady: () => {
            if (counted) return;
            counted = true;
            ready++;
            pending--;
            if (ready === command.clients.length) {
              clearTimeout(deadline);
              resolve();
            } else startMore();
          },
        });
        clients.push(client);
        pending++;
        client.start();
      }
    };
    startMore();
  });
  reply({ type: 'opened', ready, failed: command.clients.length - ready });
}

function stats(withHistogram: boolean, lastSeq: readonly number[] | undefined): WorkerReply {
  let gaps = totals.gaps;
  if (lastSeq !== undefined) {
    // Events never received at the end of the run are gaps too.
    clients.forEach((client, i) => {
      const stream = clientStreams[i]?.[0];
      const last = stream === undefined ? undefined : lastSeq[stream];
      if (last !== undefined && client.seq >= 0 && last > client.seq) gaps += last - client.seq;
    });
  }
  return {
    type: 'stats',
    received: totals.received,
    ready: clients.reduce((n, c) => n + (c.ready ? 1 : 0), 0),
    open: clients.length,
    errors: totals.errors,
    gaps,
    duplicates: totals.duplicates,
    histogram: withHistogram ? encodeIntoCompressedBase64(totals.histogram) : null,
    fromWrite: withHistogram && totals.fromWrite.totalCount > 0 ? encodeIntoCompressedBase64(totals.fromWrite) : null,
    backAt: [...totals.backAt],
  };
}

process.on('message', (raw: unknown) => {
  const parsed = WorkerCommand.safeParse(raw);
  if (!parsed.success) {
    process.stderr.write(`load worker: bad command ${parsed.error.message}\n`);
    return;
  }
  const command = parsed.data;
  switch (command.type) {
    case 'open':
      void openAll(command);
      return;
    case 'reset':
      totals.received = 0;
      totals.errors = 0;
      totals.gaps = 0;
      totals.duplicates = 0;
      totals.since = command.since;
      totals.histogram.reset();
      totals.fromWrite.reset();
      totals.backAt.length = 0;
      reply({ type: 'ok' });
      return;
    case 'stats':
      reply(stats(command.histogram, command.lastSeq));
      return;
    case 'retarget':
      for (const c of clients) c.retarget(command.port);
      reply({ type: 'ok' });
      return;
    case 'closeAll':
      for (const c of clients) c.stop();
      clients = [];
      totals = newLoadTotals();
      reply({ type: 'ok' });
      return;
    case 'exit':
      process.exit(0);
  }
});

process.on('disconnect', () => process.exit(0));
