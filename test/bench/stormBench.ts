import { startBenchServer } from './BenchServer.js';
import type { BenchContext, BenchServer } from './BenchServer.js';
import type { LoadFleet } from './LoadFleet.js';
import type { Publisher } from './Publisher.js';
import { nowMs, publishOpenLoop, publishState } from './openLoop.js';
import type { Scale } from './scale.js';

export interface StormResult {
  readonly clients: number;
  /** From the kill until 99% of the clients were subscribed again; null if they never were. */
  readonly recoveryMs: number | null;
  /** Share of the clients subscribed again when the 30 s wait ended (or 99% were). */
  readonly backShare: number;
  /** From the kill until the new process was listening. */
  readonly restartMs: number;
  /** Events some client never received (summed over clients). */
  readonly missed: number;
  readonly duplicates: number;
  readonly published: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Reconnect storm: every client subscribed and receiving, the server is killed (SIGKILL) and
 * restarted on the same port; clients reconnect with full-jitter backoff (the relay's resume from
 * their last id). Events keep being published throughout.
 */
export async function measureStorm(
  first: BenchServer,
  ctx: BenchContext,
  fleet: LoadFleet,
  publisher: Publisher,
  scale: Scale,
  streams: string[],
  tokens: string[],
  log: (line: string) => void,
): Promise<{ result: StormResult; server: BenchServer }> {
  const { clients, eventsPerSecond } = scale.storm;
  const opened = await fleet.open({
    kind: first.kind,
    port: first.port,
    streams,
    tokens,
    clients: Array.from({ length: clients }, (_, c) => [c % streams.length]),
    trackSeq: true,
    reconnect: true,
    timeoutMs: 60_000,
  });
  const state = publishState(streams);
  let stopping = false;
  const publishing = publishOpenLoop(publisher, state, eventsPerSecond, nowMs(), 120_000, () => stopping);
  await sleep(3_000);
  const killedAt = Date.now();
  first.service.signal('SIGKILL');
  await first.service.exited;
  // A new process on a new port, as a new pod behind a Service: uWS cannot rebind a port whose
  // killed connections sit in TIME_WAIT. Clients that try before they hear of it back off.
  const server = await startBenchServer(first.kind, ctx);
  const restartMs = Date.now() - killedAt;
  await fleet.retarget(server.port);
  publisher.retarget(server.port);
  log(`    killed and restarted in ${restartMs} ms`);
  const target = Math.ceil(opened.ready * 0.99);
  const deadline = Date.now() + 30_000;
  let stats = await fleet.stats(false);
  while (stats.backAt.length < target && Date.now() < deadline) {
    await sleep(100);
    stats = await fleet.stats(false);
  }
  const back = [...stats.backAt].sort((a, b) => a - b);
  const at99 = back.length >= target ? back[target - 1] : undefined;
  await sleep(2_000);
  stopping = true;
  const published = await publishing;
  await sleep(1_500);
  const final = await fleet.stats(
    false,
    state.seq.map((s) => s - 1),
  );
  await fleet.closeAll();
  return {
    result: {
      clients: opened.ready,
      recoveryMs: at99 === undefined ? null : at99 - killedAt,
      backShare: opened.ready === 0 ? 0 : Math.min(1, back.length / opened.ready),
      restartMs,
      missed: final.gaps,
      duplicates: final.duplicates,
      published,
    },
    server,
  };
}
