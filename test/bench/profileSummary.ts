import { readFileSync } from 'node:fs';
import { z } from 'zod';

// `node --import tsx test/bench/profileSummary.ts <file.cpuprofile> [top] [lastSeconds | from:to]`:
// self time by function, for profiling the relay at its knee (BENCH_PROFILE_DIR writes one profile
// per relay process). `lastSeconds` keeps only the end of the profile: the load steps, not the
// subscribing; `from:to` (seconds since the profile began) keeps one window, e.g. a task step
// that the shutdown after it would otherwise dilute. `timeline` as `top` prints, per second, the
// share of samples that were not idle: where the steps are.

const Profile = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      hitCount: z.number().optional(),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
});

const [file, topArg, lastArg] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: profileSummary.ts <file.cpuprofile> [top]');
const profile = Profile.parse(JSON.parse(readFileSync(file, 'utf8')));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const times: number[] = [];
let clock = 0;
for (const delta of profile.timeDeltas) times.push((clock += delta));
const window = /^(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(lastArg ?? '');
const from = window !== null ? Number(window[1]) * 1e6 : lastArg === undefined ? -Infinity : clock - Number(lastArg) * 1e6;
const to = window !== null ? Number(window[2]) * 1e6 : Infinity;
if (topArg === 'timeline') {
  const perSecond = new Map<number, { all: number; busy: number }>();
  profile.samples.forEach((id, i) => {
    const second = Math.floor((times[i] ?? 0) / 1e6);
    const cell = perSecond.get(second) ?? { all: 0, busy: 0 };
    cell.all++;
    if (byId.get(id)?.callFrame.functionName !== '(idle)') cell.busy++;
    perSecond.set(second, cell);
  });
  for (const [second, c] of perSecond)
    process.stdout.write(`${String(second).padStart(4)} s  ${((100 * c.busy) / c.all).toFixed(0).padStart(3)}% busy\n`);
  process.exit(0);
}
const hits = new Map<number, number>();
profile.samples.forEach((id, i) => {
  const at = times[i] ?? 0;
  if (at >= from && at < to) hits.set(id, (hits.get(id) ?? 0) + 1);
});
const self = new Map<string, number>();
let total = 0;
for (const [id, count] of hits) {
  const node = byId.get(id);
  if (node === undefined) continue;
  const f = node.callFrame;
  const where = f.url.replace(/^.*\/(node_modules\/\.pnpm\/[^/]+\/node_modules\/|apps\/|packages\/)/, '$1');
  const key = `${f.functionName || '(anonymous)'} ${where}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + count);
  total += count;
}
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 30));
for (const [key, count] of top) process.stdout.write(`${((100 * count) / total).toFixed(1).padStart(5)}%  ${key}\n`);
