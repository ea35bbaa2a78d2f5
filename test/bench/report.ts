import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FanoutResult, StepResult } from './fanoutBench.js';
import { fmtRate, kneeBracket } from './fanoutBench.js';
import type { ServerKind } from './loadgen/protocols.js';
import { SERVER_KINDS } from './loadgen/protocols.js';
import type { MemoryResult } from './memoryBench.js';
import type { Pinning } from './pinning.js';
import { renderKneeBounds } from './renderKnees.js';
import { renderTasksMarkdown, renderTasksSvg } from './renderTasks.js';
import type { Scale } from './scale.js';
import type { StormResult } from './stormBench.js';
import type { TaskResult } from './tasksBench.js';

export interface ServerResults {
  fanout: FanoutResult[];
  memory: MemoryResult | null;
  storm: StormResult | null;
}

export interface BenchResults {
  scale: string;
  startedAt: string;
  durationS: number;
  machine: { cores: number; model: string; node: string; loadAverageAtStart: number; loadAverageAtEnd: number };
  scaleConfig: Scale;
  socketioDefaults: Record<string, unknown> | null;
  servers: Partial<Record<ServerKind, ServerResults>>;
  /** Absent in runs before pinning was recorded. */
  pinning?: Pinning;
  /** The per-task-stream workloads; absent in runs before they existed. */
  tasks?: TaskResult[];
  /** BENCH_ROUNDS when above 1 (each task result then the median of that many rounds); absent with one round. */
  tasksRounds?: number;
}

const LABEL: Record<ServerKind, string> = {
  relay: 'streamgate relay',
  socketio: 'Socket.IO 4 + redis-streams',
  wsrelay: 'ws + ioredis relay',
  uws: 'uWS publish (ceiling)',
  uwsfloor: 'uWS on the live channels (floor)',
};
const COLOR: Record<ServerKind, string> = {
  relay: '#2563eb',
  socketio: '#dc2626',
  wsrelay: '#d97706',
  uws: '#6b7280',
  uwsfloor: '#94a3b8',
};

/** `pass–fail`: the highest passing rate, and the lowest failing one above it (the knee lies between). */
function kneeCell(r: FanoutResult | undefined): string {
  if (r === undefined) return '—';
  const b = r.knee === null ? null : kneeBracket(r);
  if (r.knee === null || b === null) return `< ${fmtRate(r.steps.reduce((m, s) => Math.min(m, s.rate), Infinity))}`;
  const cpu = `${(r.knee.serverCpu * 100).toFixed(0)}% cpu`;
  const rates = b.fail === null ? `≥ ${fmtRate(b.pass)}` : `${fmtRate(b.pass)}–${fmtRate(b.fail)}`;
  return `${rates}${r.clientBound === true ? ' †' : ''} (${cpu})`;
}

/**
 * Ratio of two knees, with the range their brackets allow: a's pass over b's fail up to a's fail
 * over b's pass (open-ended when a bracket has no failing side).
 */
function ratio(a: FanoutResult | undefined, b: FanoutResult | undefined): string {
  if (a?.knee == null || b?.knee == null) return '—';
  const ba = kneeBracket(a);
  const bb = kneeBracket(b);
  const point = `${(a.knee.rate / b.knee.rate).toFixed(2)}×`;
  if (ba === null || bb === null) return point;
  const low = bb.fail === null ? '?' : (ba.pass / bb.fail).toFixed(2);
  const high = ba.fail === null ? '?' : (ba.fail / bb.pass).toFixed(2);
  return `${point} (${low}–${high})`;
}

function latencyCell(s: StepResult | null | undefined): string {
  if (s === null || s === undefined) return '—';
  const warn = s.pass ? '' : ` (${(s.deliveredRatio * 100).toFixed(1)}% delivered)`;
  return `${s.p50Ms.toFixed(1)} / ${s.p99Ms.toFixed(1)}${warn}`;
}

export function renderMarkdown(r: BenchResults): string {
  const kinds = SERVER_KINDS.filter((k) => r.servers[k] !== undefined);
  const workloads = [...new Set(kinds.flatMap((k) => r.servers[k]?.fanout.map((f) => f.workload) ?? []))];
  const fan = (k: ServerKind, w: string) => r.servers[k]?.fanout.find((f) => f.workload === w);
  const lines: string[] = [];
  lines.push(
    `Run ${r.startedAt}, scale \`${r.scale}\`, ${r.durationS.toFixed(0)} s; ${r.machine.cores} cores (${r.machine.model}), Node ${r.machine.node}; ` +
      `load average ${r.machine.loadAverageAtStart.toFixed(2)} at start, ${r.machine.loadAverageAtEnd.toFixed(2)} at end.`,
  );
  lines.push('');
  // A run of the task workloads alone has no fan-out, memory or storm tables to show.
  if (kinds.length > 0) {
    lines.push(
      '**Deliveries/s at the knee** (highest offered rate with p99 < 100 ms and ≥ 99.9% delivered – lowest failing rate above it: the knee lies between; server CPU at the passing step, 100% = one core; † = client-bound: the server used < 90% of a core; ratios: of the passing rates, in brackets the range the two brackets allow)',
    );
    lines.push('');
    lines.push(`| workload | ${kinds.map((k) => LABEL[k]).join(' | ')} | relay ÷ Socket.IO | relay ÷ uWS |`);
    lines.push(`| --- | ${kinds.map(() => '---').join(' | ')} | --- | --- |`);
    for (const w of workloads) {
      lines.push(
        `| ${w} | ${kinds.map((k) => kneeCell(fan(k, w))).join(' | ')} | ${ratio(fan('relay', w), fan('socketio', w))} | ${ratio(fan('relay', w), fan('uws', w))} |`,
      );
    }
    lines.push('');
    lines.push(
      ...renderKneeBounds(
        r.pinning,
        workloads,
        kinds.map((k) => ({ label: LABEL[k], result: (w: string) => fan(k, w) })),
      ),
    );
    lines.push(
      `**Latency p50 / p99 (ms) at a fixed ${fmtRate(r.scaleConfig.fixedRate)} deliveries/s**, measured from each event's intended send time; and the relay's at half its knee`,
    );
    lines.push('');
    lines.push(`| workload | ${kinds.map((k) => LABEL[k]).join(' | ')} | relay at ½ knee |`);
    lines.push(`| --- | ${kinds.map(() => '---').join(' | ')} | --- |`);
    for (const w of workloads) {
      const half = fan('relay', w)?.halfKnee;
      const halfCell = half === null || half === undefined ? '—' : `${latencyCell(half)} at ${fmtRate(half.rate)}/s`;
      lines.push(`| ${w} | ${kinds.map((k) => latencyCell(fan(k, w)?.fixed)).join(' | ')} | ${halfCell} |`);
    }
    lines.push('');
    lines.push(
      `**Cost per delivery at the fixed ${fmtRate(r.scaleConfig.fixedRate)} deliveries/s**: CPU µs the server and its Redis spent per event delivered (lower is better; far less sensitive to other load on the machine than latency)`,
    );
    lines.push('');
    // With the floor: what Socket.IO spends over what the relay's design must, and the relay over that.
    const floor = kinds.includes('uwsfloor');
    const floorHeads = floor ? ' Socket.IO ÷ floor | relay ÷ floor |' : '';
    lines.push(`| workload | ${kinds.map((k) => LABEL[k]).join(' | ')} | Socket.IO ÷ relay | uWS ÷ relay |${floorHeads}`);
    lines.push(`| --- | ${kinds.map(() => '---').join(' | ')} | --- | --- |${floor ? ' --- | --- |' : ''}`);
    const cost = (k: ServerKind, w: string): number | undefined => fan(k, w)?.fixed?.serverUsPerDelivery;
    const costRatio = (a: number | undefined, b: number | undefined): string =>
      a === undefined || b === undefined || b === 0 ? '—' : `${(a / b).toFixed(2)}×`;
    for (const w of workloads) {
      const floorCells = floor
        ? ` ${costRatio(cost('socketio', w), cost('uwsfloor', w))} | ${costRatio(cost('relay', w), cost('uwsfloor', w))} |`
        : '';
      lines.push(
        `| ${w} | ${kinds
          .map((k) => {
            const c = cost(k, w);
            return c === undefined ? '—' : c.toFixed(2);
          })
          .join(
            ' | ',
          )} | ${costRatio(cost('socketio', w), cost('relay', w))} | ${costRatio(cost('uws', w), cost('relay', w))} |${floorCells}`,
      );
    }
    lines.push('');
    lines.push('**Idle connections and reconnect storm**');
    lines.push('');
    lines.push(`| | ${kinds.map((k) => LABEL[k]).join(' | ')} |`);
    lines.push(`| --- | ${kinds.map(() => '---').join(' | ')} |`);
    const mem = (k: ServerKind) => {
      const m = r.servers[k]?.memory;
      return m === null || m === undefined ? '—' : `${(m.bytesPerConnection / 1024).toFixed(1)} KB`;
    };
    const storm = (k: ServerKind, f: (s: StormResult) => string) => {
      const s = r.servers[k]?.storm;
      return s === null || s === undefined ? '—' : f(s);
    };
    lines.push(
      `| bytes per idle connection (RSS slope after GC, after ${r.scaleConfig.memory.warmup} uncounted) | ${kinds.map(mem).join(' | ')} |`,
    );
    lines.push(
      `| storm: 99% of clients back after (from kill) | ${kinds.map((k) => storm(k, (s) => (s.recoveryMs === null ? `not within 30 s after the restart (${(s.backShare * 100).toFixed(0)}% back)` : `${(s.recoveryMs / 1000).toFixed(2)} s`))).join(' | ')} |`,
    );
    lines.push(
      `| storm: new process listening after (from kill) | ${kinds.map((k) => storm(k, (s) => `${(s.restartMs / 1000).toFixed(2)} s`)).join(' | ')} |`,
    );
    lines.push(
      `| storm: events missed / duplicated (all clients) | ${kinds.map((k) => storm(k, (s) => `${s.missed} / ${s.duplicates}`)).join(' | ')} |`,
    );
    lines.push('');
  }
  lines.push(...renderTasksMarkdown(r.tasks ?? [], r.scaleConfig.tasks?.stepMs, r.tasksRounds));
  if (r.socketioDefaults !== null)
    lines.push(`Socket.IO settings (its defaults, WebSocket transport only): \`${JSON.stringify(r.socketioDefaults)}\``);
  return `${lines.join('\n')}\n`;
}

interface Panel {
  readonly title: string;
  readonly value: (k: ServerKind, w: string) => number;
  readonly label: (v: number) => string;
  readonly pale: (k: ServerKind, w: string) => boolean;
}

/** Two panels: deliveries/s at the knee, and CPU per delivery at the fixed rate. */
export function renderSvg(r: BenchResults): string {
  const kinds = SERVER_KINDS.filter((k) => r.servers[k] !== undefined);
  const workloads = [...new Set(kinds.flatMap((k) => r.servers[k]?.fanout.map((f) => f.workload) ?? []))];
  const fan = (k: ServerKind, w: string) => r.servers[k]?.fanout.find((f) => f.workload === w);
  const panels: Panel[] = [
    {
      title: `Deliveries/s at the knee (p99 < 100 ms, ≥ 99.9% delivered); paler: client-bound (server < 90% of a core)`,
      value: (k, w) => fan(k, w)?.knee?.rate ?? 0,
      label: fmtRate,
      pale: (k, w) => fan(k, w)?.clientBound === true,
    },
    {
      title: `CPU µs per delivery, server + its Redis, at ${fmtRate(r.scaleConfig.fixedRate)} deliveries/s (lower is better)`,
      value: (k, w) => fan(k, w)?.fixed?.serverUsPerDelivery ?? 0,
      label: (v) => v.toFixed(1),
      pale: () => false,
    },
  ];
  const width = 960;
  const left = 70;
  const plotH = 240;
  const panelH = plotH + 70;
  const height = 40 + panels.length * panelH + 50;
  const groupW = (width - left - 20) / Math.max(1, workloads.length);
  const barW = Math.min(36, (groupW - 16) / Math.max(1, kinds.length));
  const out: string[] = [];
  out.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`);
  out.push(`<rect width="${width}" height="${height}" fill="white"/>`);
  out.push(
    `<text x="${left}" y="20" font-size="14" font-weight="bold">streamgate relay vs Socket.IO, a ws relay and the uWS ceiling — ${r.machine.cores} cores, one run (${escapeXml(r.startedAt)})</text>`,
  );
  panels.forEach((panel, pi) => {
    const top = 40 + pi * panelH + 30;
    const max = Math.max(1e-9, ...kinds.flatMap((k) => workloads.map((w) => panel.value(k, w))));
    out.push(`<text x="${left}" y="${top - 12}" font-size="12" font-weight="bold">${escapeXml(panel.title)}</text>`);
    for (let i = 0; i <= 4; i++) {
      const y = top + plotH - (plotH * i) / 4;
      out.push(`<line x1="${left}" x2="${width - 20}" y1="${y}" y2="${y}" stroke="#e5e7eb"/>`);
      out.push(`<text x="${left - 6}" y="${y + 4}" text-anchor="end">${panel.label((max * i) / 4)}</text>`);
    }
    workloads.forEach((w, gi) => {
      const gx = left + gi * groupW + 8;
      kinds.forEach((k, ki) => {
        const v = panel.value(k, w);
        const h = (plotH * v) / max;
        const x = gx + ki * barW;
        const y = top + plotH - h;
        out.push(
          `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLOR[k]}"${panel.pale(k, w) ? ' fill-opacity="0.55"' : ''}/>`,
        );
        out.push(
          `<text x="${(x + barW / 2 - 1).toFixed(1)}" y="${(y - 3).toFixed(1)}" text-anchor="middle" font-size="9">${v > 0 ? panel.label(v) : '—'}</text>`,
        );
      });
      out.push(
        `<text x="${(gx + (kinds.length * barW) / 2).toFixed(1)}" y="${top + plotH + 16}" text-anchor="middle">${escapeXml(w)}</text>`,
      );
    });
  });
  kinds.forEach((k, i) => {
    const x = left + i * 210;
    out.push(`<rect x="${x}" y="${height - 40}" width="12" height="12" fill="${COLOR[k]}"/>`);
    out.push(`<text x="${x + 18}" y="${height - 30}">${escapeXml(LABEL[k])}</text>`);
  });
  out.push(
    `<text x="${left}" y="${height - 10}" fill="#6b7280">Loopback, one load generator for all servers; — = no passing step (knee below the lowest step tried).</text>`,
  );
  out.push('</svg>');
  return `${out.join('\n')}\n`;
}

function escapeXml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

export function writeReport(r: BenchResults, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const files = [join(dir, 'results.md'), join(dir, 'results.json'), join(dir, 'chart.svg')];
  writeFileSync(files[0] ?? '', renderMarkdown(r));
  writeFileSync(files[1] ?? '', `${JSON.stringify(r, null, 2)}\n`);
  if (Object.values(r.servers).some((v) => v.fanout.length > 0)) writeFileSync(files[2] ?? '', renderSvg(r));
  else files.pop();
  if ((r.tasks ?? []).length > 0) {
    const tasksFile = join(dir, 'tasks.svg');
    writeFileSync(
      tasksFile,
      renderTasksSvg(
        r.tasks ?? [],
        `Per-task streams × 1 subscriber — ${r.machine.cores} cores, ${(r.tasksRounds ?? 1) > 1 ? `median of ${r.tasksRounds} rounds` : 'one run'} (${r.startedAt})`,
      ),
    );
    files.push(tasksFile);
  }
  return files;
}
