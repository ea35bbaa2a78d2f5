import { pairedRatios } from './pairedRatios.js';
import type { TaskResult } from './tasksBench.js';
import { JETSTREAM_SERIES, TASK_SERIES } from './taskWorkloads.js';
import type { TaskSeries } from './taskWorkloads.js';

const JETSTREAM_TASK_SERIES: readonly TaskSeries[] = Object.values(JETSTREAM_SERIES);

export const SERIES_LABEL: Record<TaskSeries, string> = {
  'relay-batch': 'streamgate relay, batched XREAD',
  'relay-notify': 'streamgate relay, keyspace notifications',
  'relay-jetstream': 'streamgate relay, JetStream (R1)',
  // Its log column is the sum over the three nats-servers: never to be read as one server's, as R1's is.
  'relay-jetstream-r3': 'streamgate relay, JetStream R3 (3 nodes, log CPU summed)',
  'uws-floor': 'floor: bare uWS on the live channels',
  wsrelay: 'ws + ioredis relay',
  socketio: 'Socket.IO 4 + redis-streams',
};
const SERIES_COLOR: Record<TaskSeries, string> = {
  'relay-batch': '#93c5fd',
  'relay-notify': '#2563eb',
  'relay-jetstream': '#059669',
  'relay-jetstream-r3': '#7c3aed',
  'uws-floor': '#64748b',
  wsrelay: '#d97706',
  socketio: '#dc2626',
};

const fmtUs = (v: number | null): string => (v === null ? '—' : v.toFixed(1));

/**
 * Series whose entry ids carry no write time: a JetStream id is `0-<stream sequence>`, so there is
 * no "p99 from the write" to give (the load client records none for them; older results may hold
 * one read from a time of 0).
 */
const IDS_WITHOUT_TIME: ReadonlySet<TaskSeries> = new Set(JETSTREAM_TASK_SERIES);

/** The p99 from the write, ms, or — where the frames carried no id with a time. */
export function fromWriteCell(series: TaskSeries, fromWriteP99Ms: number | undefined): string {
  return fromWriteP99Ms === undefined || IDS_WITHOUT_TIME.has(series) ? '—' : fromWriteP99Ms.toFixed(1);
}
const fmtCount = (n: number): string => n.toLocaleString('en-US');

/**
 * Redis CPU per entry at the most streams measured over its value at the fewest, for one series
 * at one rate: 1.0 is the flat line. Null with fewer than two measured stream counts.
 */
export function redisGrowth(results: readonly TaskResult[], series: TaskSeries, eventsPerSecond: number): number | null {
  const points = results
    .filter((r) => r.series === series && r.eventsPerSecond === eventsPerSecond && r.redisUsPerEntry !== null)
    .sort((a, b) => a.streams - b.streams);
  const first = points[0]?.redisUsPerEntry;
  const last = points.length < 2 ? undefined : points[points.length - 1]?.redisUsPerEntry;
  return first === undefined || last === undefined || first === null || last === null || first === 0 ? null : last / first;
}

/**
 * The task table. With `rounds` > 1 (BENCH_ROUNDS) each row summarizes its rounds (aggregateRounds)
 * and the relay ÷ Socket.IO lines follow the table; with one round the output is as it always was.
 */
export function renderTasksMarkdown(results: readonly TaskResult[], stepMs: number | undefined, rounds = 1): string[] {
  if (results.length === 0) return [];
  const lines: string[] = [];
  const jetStream = results.some((r) => JETSTREAM_TASK_SERIES.includes(r.series));
  const replicated = results.some((r) => r.series === 'relay-jetstream-r3');
  const roundsNote =
    rounds > 1
      ? `${rounds} rounds, the series alternating within each workload (A B, then B A), a fresh server each time; ` +
        'µs/entry: the median of the rounds; p50 / p99 and p99 from write: of the median round (the one whose server µs/entry is the lower median); ' +
        'delivered: over all rounds; '
      : '';
  lines.push(
    `**Per-task streams: many streams × 1 subscriber each, at a fixed total rate** (${stepMs === undefined ? '' : `${stepMs / 1000} s per workload after a warm-up, `}${roundsNote}` +
      `round-robin over the streams; CPU µs per entry delivered, Redis with its XADDs${jetStream ? ` (the JetStream series: its nats-server, with its publishes, in the log column${replicated ? '; JetStream R3: the sum over its 3 nats-servers, leader and followers, the whole cost of a replicated entry, not comparable with one R1 server’s' : ''})` : ''}; ` +
      'latency from intended send time, and p99 from the write: from the time in the entry’s stream id, the server’s own share, read up to 1 ms high, ' +
      `where frames carry ids${jetStream ? ' with a time (a JetStream id, `0-<seq>`, has none)' : ''})`,
  );
  lines.push('');
  lines.push(
    `| workload | server | sockets | ${jetStream ? `log (Redis or nats-server${replicated ? ', R3: 3 nats-servers summed' : ''})` : 'Redis'} µs/entry | server µs/entry | p50 / p99 ms | p99 from write ms | delivered |`,
  );
  lines.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
  const workloads = [...new Set(results.map((r) => r.workload))];
  for (const w of workloads) {
    for (const series of TASK_SERIES) {
      const r = results.find((x) => x.workload === w && x.series === series);
      if (r === undefined) continue;
      if (r.step === null) {
        lines.push(`| ${w} | ${SERIES_LABEL[series]} | ${fmtCount(r.sockets)} | not run: ${r.skipped ?? 'unknown'} | | | | |`);
        continue;
      }
      const s = r.step;
      const failed =
        r.openFailed > 0 ? ` (${fmtCount(r.openFailed)} sockets failed to subscribe${r.rounds === undefined ? '' : ', all rounds'})` : '';
      const fewer =
        r.rounds !== undefined && r.rounds.length < rounds ? ` (${r.rounds.length} of ${rounds} rounds: time budget spent)` : '';
      lines.push(
        `| ${w} | ${SERIES_LABEL[series]} | ${fmtCount(r.sockets)}${failed}${fewer} | ${fmtUs(r.redisUsPerEntry)} | ${fmtUs(r.serverUsPerEntry)} | ` +
          `${s.p50Ms.toFixed(1)} / ${s.p99Ms.toFixed(1)} | ${fromWriteCell(series, s.fromWriteP99Ms)} | ${((r.deliveredShare ?? s.deliveredRatio) * 100).toFixed(2)}% |`,
      );
    }
  }
  lines.push('');
  if (rounds > 1) lines.push(...renderRoundRatios(results, workloads), ...renderJetStreamRatios(results, workloads));
  const rates = [...new Set(results.map((r) => r.eventsPerSecond))].sort((a, b) => a - b);
  const growth = TASK_SERIES.flatMap((series) =>
    rates.map((rate) => ({ series, rate, g: redisGrowth(results, series, rate) })).filter((x) => x.g !== null),
  );
  if (growth.length > 0) {
    lines.push(
      `Redis CPU per entry, most streams ÷ fewest (1.00 = flat): ${growth
        .map((x) => `${SERIES_LABEL[x.series]} at ${fmtCount(x.rate)}/s ${(x.g ?? 0).toFixed(2)}×`)
        .join('; ')}.`,
    );
    lines.push('');
  }
  return lines;
}

// The series each weighed against Socket.IO: the relay's, and the floor of its live path.
const RELAY_SERIES = ['relay-batch', 'relay-notify', 'uws-floor'] as const satisfies readonly TaskSeries[];

/** `a` ÷ `b` of one metric: the ratio of the medians, and the range of the paired rounds' ratios. */
function ratioCell(a: TaskResult, b: TaskResult, metric: (r: TaskResult) => number | null): string {
  const p = pairedRatios(a, b, metric);
  const range = p.min === null || p.max === null ? 'no round paired' : `rounds ${p.min.toFixed(2)}–${p.max.toFixed(2)}×`;
  return `${p.ofMedians === null ? '—' : `${p.ofMedians.toFixed(2)}×`} (${range})`;
}

function pairedCount(a: TaskResult, b: TaskResult): string {
  const paired = pairedRatios(a, b, (r) => r.serverUsPerEntry).perRound.length;
  return `${paired} paired ${paired === 1 ? 'round' : 'rounds'}`;
}

/**
 * Per workload and relay series measured in rounds beside Socket.IO: relay ÷ Socket.IO of the
 * medians, and the range of the per-round ratios (each round's pair ran back to back, so that
 * range is the drift the ratio is left with, not the drift between the series' measurements).
 */
function renderRoundRatios(results: readonly TaskResult[], workloads: readonly string[]): string[] {
  const lines: string[] = [];
  for (const w of workloads) {
    const socketio = results.find((r) => r.workload === w && r.series === 'socketio' && r.rounds !== undefined);
    if (socketio === undefined) continue;
    for (const series of RELAY_SERIES) {
      const relay = results.find((r) => r.workload === w && r.series === series && r.rounds !== undefined);
      if (relay === undefined) continue;
      lines.push(
        `- ${w}, ${SERIES_LABEL[series]} ÷ ${SERIES_LABEL.socketio}: server µs/entry ${ratioCell(relay, socketio, (r) => r.serverUsPerEntry)}, ` +
          `Redis µs/entry ${ratioCell(relay, socketio, (r) => r.redisUsPerEntry)}; ${pairedCount(relay, socketio)}`,
      );
    }
  }
  for (const w of workloads) {
    const floor = results.find((r) => r.workload === w && r.series === 'uws-floor' && r.rounds !== undefined);
    const relay = results.find((r) => r.workload === w && r.series === 'relay-notify' && r.rounds !== undefined);
    if (floor === undefined || relay === undefined) continue;
    lines.push(
      `- ${w}, ${SERIES_LABEL['relay-notify']} ÷ ${SERIES_LABEL['uws-floor']}: server µs/entry ${ratioCell(relay, floor, (r) => r.serverUsPerEntry)}; ${pairedCount(relay, floor)}`,
    );
  }
  if (lines.length === 0) return [];
  return [
    '**Relay ÷ Socket.IO per workload**: ratio of the medians (below 1: the relay spends less per entry); after “rounds”, the lowest and highest of the per-round ratios, round r’s relay ÷ round r’s Socket.IO',
    '',
    ...lines,
    '',
  ];
}

/** The log of a JetStream series as its ratio lines name it. */
const JETSTREAM_LOG: Partial<Record<TaskSeries, string>> = {
  'relay-jetstream': 'nats-server',
  'relay-jetstream-r3': '3 nats-servers summed',
};

/**
 * Per workload measured in rounds with the relay on JetStream and on Redis (keyspace
 * notifications): each JetStream series ÷ Redis, the log's CPU (nats-server ÷ Redis; for R3 its
 * three nats-servers summed ÷ Redis) and the relay's, and R3 ÷ R1 when both ran, as
 * renderRoundRatios gives relay ÷ Socket.IO.
 */
function renderJetStreamRatios(results: readonly TaskResult[], workloads: readonly string[]): string[] {
  const pairs: ReadonlyArray<readonly [TaskSeries, TaskSeries]> = [
    ['relay-jetstream', 'relay-notify'],
    ['relay-jetstream-r3', 'relay-notify'],
    ['relay-jetstream-r3', 'relay-jetstream'],
  ];
  const out: string[] = [];
  for (const [a, b] of pairs) {
    const lines: string[] = [];
    for (const w of workloads) {
      const find = (series: TaskSeries) => results.find((r) => r.workload === w && r.series === series && r.rounds !== undefined);
      const top = find(a);
      const bottom = find(b);
      if (top === undefined || bottom === undefined) continue;
      lines.push(
        `- ${w}: log µs/entry (${JETSTREAM_LOG[a] ?? a} ÷ ${JETSTREAM_LOG[b] ?? 'Redis'}) ${ratioCell(top, bottom, (r) => r.redisUsPerEntry)}, ` +
          `relay µs/entry ${ratioCell(top, bottom, (r) => r.serverUsPerEntry)}; ${pairedCount(top, bottom)}`,
      );
    }
    if (lines.length === 0) continue;
    const side = b === 'relay-notify' ? 'JetStream’s side' : 'R3';
    out.push(
      `**${SERIES_LABEL[a]} ÷ ${SERIES_LABEL[b]} per workload**: ratio of the medians (below 1: ${side} spends less per entry); after “rounds”, the lowest and highest of the per-round ratios`,
      '',
      ...lines,
      '',
    );
  }
  return out;
}

/** Redis CPU per entry against streams watched (log scale), one panel per rate, one line per series. */
export function renderTasksSvg(results: readonly TaskResult[], title: string): string {
  const rates = [...new Set(results.map((r) => r.eventsPerSecond))].sort((a, b) => a - b);
  const counts = [...new Set(results.map((r) => r.streams))].sort((a, b) => a - b);
  const width = 960;
  const left = 70;
  const right = 20;
  const plotH = 220;
  const panelH = plotH + 70;
  const height = 40 + Math.max(1, rates.length) * panelH + 50;
  const lo = Math.log10(Math.min(...counts, 1_000));
  const hi = Math.log10(Math.max(...counts, 1_000));
  const xOf = (n: number): number => left + 30 + ((width - left - right - 60) * (Math.log10(n) - lo)) / Math.max(1e-9, hi - lo);
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  out.push(`<text x="${left}" y="20" font-size="14" font-weight="bold">${escapeXml(title)}</text>`);
  rates.forEach((rate, pi) => {
    const top = 40 + pi * panelH + 30;
    const here = results.filter((r) => r.eventsPerSecond === rate);
    const max = Math.max(1e-9, ...here.map((r) => r.redisUsPerEntry ?? 0));
    const yOf = (v: number): number => top + plotH - (plotH * v) / max;
    out.push(
      `<text x="${left}" y="${top - 12}" font-size="12" font-weight="bold">Redis CPU µs per delivered entry at ${fmtCount(rate)} events/s (lower is better)</text>`,
    );
    for (let i = 0; i <= 4; i++) {
      const y = yOf((max * i) / 4);
      out.push(`<line x1="${left}" x2="${width - right}" y1="${y.toFixed(1)}" y2="${y.toFixed(1)}" stroke="#e5e7eb"/>`);
      out.push(`<text x="${left - 6}" y="${(y + 4).toFixed(1)}" text-anchor="end">${((max * i) / 4).toFixed(0)}</text>`);
    }
    for (const n of counts) {
      out.push(`<text x="${xOf(n).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${fmtCount(n)} streams</text>`);
    }
    for (const series of TASK_SERIES) {
      const pts = here
        .filter((r) => r.series === series && r.redisUsPerEntry !== null)
        .sort((a, b) => a.streams - b.streams)
        .map((r) => ({ x: xOf(r.streams), y: yOf(r.redisUsPerEntry ?? 0), v: r.redisUsPerEntry ?? 0 }));
      if (pts.length === 0) continue;
      const color = SERIES_COLOR[series];
      const path = pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
      out.push(`<path d="${path}" fill="none" stroke="${color}" stroke-width="2"/>`);
      for (const p of pts) {
        out.push(`<circle cx="${p.x.toFixed(1)}" cy="${p.y.toFixed(1)}" r="3.5" fill="${color}"/>`);
        out.push(`<text x="${(p.x + 6).toFixed(1)}" y="${(p.y - 6).toFixed(1)}" font-size="9">${p.v.toFixed(0)}</text>`);
      }
    }
  });
  // Each legend entry starts after the previous label (about 6 px a character at 11 px), so long labels never overlap.
  let legendX = left;
  for (const series of TASK_SERIES) {
    out.push(`<rect x="${legendX}" y="${height - 40}" width="12" height="12" fill="${SERIES_COLOR[series]}"/>`);
    out.push(`<text x="${legendX + 18}" y="${height - 30}">${escapeXml(SERIES_LABEL[series])}</text>`);
    legendX += 18 + SERIES_LABEL[series].length * 6 + 24;
  }
  out.push(
    `<text x="${left}" y="${height - 10}" fill="#6b7280">One subscriber per stream; Redis CPU includes the XADDs; a missing point: not run (see results.md).</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
