import { readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may contain spaces; the fields after it are fixed.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** Resident set size in bytes, from /proc/<pid>/status. */
export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match === null ? 0 : Number(match[1]) * 1024;
}

/** Measures the share of one core a set of processes used between start() and stop(). */
export class CpuMeter {
  private readonly start: Map<number, number>;
  private readonly startedAt = performance.now();

  constructor(private readonly pids: readonly number[]) {
    this.start = new Map(pids.map((pid) => [pid, safeCpu(pid)]));
  }

  /** Cores used by each process over the interval (1.0 = one full core), and the interval. */
  stop(): { cores: number[]; wallSeconds: number } {
    const wallSeconds = (performance.now() - this.startedAt) / 1000;
    return { cores: this.pids.map((pid) => (safeCpu(pid) - (this.start.get(pid) ?? 0)) / wallSeconds), wallSeconds };
  }
}

function safeCpu(pid: number): number {
  try {
    return cpuSeconds(pid);
  } catch {
    // The process is gone (killed in the storm): it used nothing more.
    return 0;
  }
}
