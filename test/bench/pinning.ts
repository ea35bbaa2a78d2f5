import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/**
 * On a 2-core machine the load generator and the server compete for the same cores, so an
 * unpinned knee cannot say which of them ran out. Pinned, the server under test has one core to
 * itself and everything else (load workers, publisher, this orchestrator, Redis) shares the
 * other: a knee with the server's core near full is the server's; any other is the client side's.
 */
export interface PinPlan {
  /** `taskset -c` list for the server under test. */
  readonly serverCpus: string;
  /** `taskset -c` list for the load generator, publisher, orchestrator and Redis. */
  readonly clientCpus: string;
}

export type Pinning = { readonly pinned: true; readonly plan: PinPlan } | { readonly pinned: false; readonly reason: string };

/** The server's core at or above this share (of one core) at the knee: the server was the limit. */
export const SERVER_BOUND_CPU = 0.9;

/** Chooses the cores from what this process may run on (`allowed`, ascending), or says why not. */
export function planPinning(mode: 'auto' | 'off', allowed: readonly number[], tasksetFound: boolean): Pinning {
  if (mode === 'off') return { pinned: false, reason: 'BENCH_PIN=off' };
  if (!tasksetFound)
    return { pinned: false, reason: 'taskset not found (util-linux): the server shares the cores with the load generator' };
  if (allowed.length < 2) return { pinned: false, reason: `only ${allowed.length} core available: nothing to pin apart` };
  const [server, ...rest] = allowed;
  return { pinned: true, plan: { serverCpus: String(server), clientCpus: rest.join(',') } };
}

/** The CPU numbers in a `Cpus_allowed_list` value such as `0-1,4`. */
export function parseCpuList(list: string): number[] {
  const cpus: number[] = [];
  for (const part of list.trim().split(',')) {
    if (part === '') continue;
    const [a, b] = part.split('-').map(Number);
    if (a === undefined || !Number.isInteger(a)) continue;
    const end = b === undefined || !Number.isInteger(b) ? a : b;
    for (let c = a; c <= end; c++) cpus.push(c);
  }
  return cpus;
}

export type Bound = 'server' | 'client';

/**
 * Which side limited a knee: `server` when the server's share of a core reached
 * SERVER_BOUND_CPU, else `client`. Unpinned, the share is still what the server used, but the
 * core it did not use may have gone to the load generator, so the verdict is weaker (the report
 * says whether the run was pinned).
 */
export function classifyBound(serverCores: number): Bound {
  return serverCores >= SERVER_BOUND_CPU ? 'server' : 'client';
}

/** CPU µs per delivery from a share of a core over `wallSeconds`; null when nothing was delivered. */
export function usPer(cores: number, wallSeconds: number, delivered: number): number | null {
  return delivered === 0 ? null : (cores * wallSeconds * 1e6) / delivered;
}

/** Deliveries per CPU-second of a process: what sizing a fleet needs when the load generator, not the server, was the limit. */
export function deliveriesPerCpuSecond(cores: number, wallSeconds: number, delivered: number): number | null {
  const cpuSeconds = cores * wallSeconds;
  return cpuSeconds <= 0 ? null : delivered / cpuSeconds;
}

function tasksetFound(): boolean {
  const probe = spawnSync('taskset', ['--version'], { encoding: 'utf8' });
  return probe.error === undefined && probe.status === 0;
}

/** The cores this process may run on, from /proc/self/status (Linux), else none. */
function allowedCpus(): number[] {
  let status: string;
  try {
    status = readFileSync('/proc/self/status', 'utf8');
  } catch (error) {
    process.stderr.write(`bench: cannot read /proc/self/status, not pinning: ${String(error)}\n`);
    return [];
  }
  const value = /^Cpus_allowed_list:\s*(.+)$/m.exec(status)?.[1];
  return value === undefined ? [] : parseCpuList(value);
}

export function detectPinning(mode: 'auto' | 'off'): Pinning {
  return planPinning(mode, mode === 'off' ? [] : allowedCpus(), mode !== 'off' && tasksetFound());
}

/**
 * Pins a running process and all its threads (`-a`); threads it starts later inherit the mask.
 * Throws on failure: a run that claims to be pinned must be.
 */
export function pinProcess(pid: number, cpus: string): void {
  const r = spawnSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { encoding: 'utf8' });
  if (r.error !== undefined || r.status !== 0) {
    throw new Error(`taskset -a -p -c ${cpus} ${pid} failed: ${r.error?.message ?? r.stderr.trim()}`);
  }
}
