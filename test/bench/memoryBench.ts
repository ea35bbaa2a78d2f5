import type { BenchServer } from './BenchServer.js';
import type { LoadFleet } from './LoadFleet.js';
import { rssBytes } from './procStats.js';
import type { Scale } from './scale.js';

export interface MemoryResult {
  /** [connections, RSS bytes after GC] after each wave. */
  readonly points: Array<[number, number]>;
  /** Least-squares slope of RSS over connections. */
  readonly bytesPerConnection: number;
  readonly failed: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function rssAfterGc(server: BenchServer): Promise<number> {
  server.service.signal('SIGUSR2');
  await sleep(800);
  return rssBytes(server.pid);
}

/**
 * Idle connections (each subscribed to one quiet stream) opened in waves after a warm-up wave;
 * RSS read after a full GC.
 */
export async function measureMemory(
  server: BenchServer,
  fleet: LoadFleet,
  scale: Scale,
  stream: string,
  token: string | undefined,
): Promise<MemoryResult> {
  const open = (count: number) =>
    fleet.open({
      kind: server.kind,
      port: server.port,
      streams: [stream],
      tokens: token === undefined ? [] : [token],
      clients: Array.from({ length: count }, () => [0]),
      trackSeq: false,
      reconnect: false,
      timeoutMs: 30_000,
    });
  // What the first connections pay once (the stream's channel, code compiled on first use, the
  // young generation grown by the first burst) is no part of what each connection holds: a
  // warm-up wave, kept open and not counted, comes before the first point.
  const warm = await open(scale.memory.warmup);
  const points: Array<[number, number]> = [[0, await rssAfterGc(server)]];
  let failed = 0;
  for (let wave = 1; wave <= scale.memory.waves; wave++) {
    const opened = await open(scale.memory.perWave);
    failed += opened.failed;
    points.push([wave * scale.memory.perWave - failed, await rssAfterGc(server)]);
  }
  failed += warm.failed;
  await fleet.closeAll();
  return { points, bytesPerConnection: slope(points), failed };
}

function slope(points: ReadonlyArray<[number, number]>): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0;
  let den = 0;
  for (const [x, y] of points) {
    num += (x - mx) * (y - my);
    den += (x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
