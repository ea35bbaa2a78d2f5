/** One command's counters from `INFO commandstats`. */
export interface CommandCount {
  readonly calls: number;
  readonly usec: number;
}

/** What one command cost Redis per delivered entry over a step. */
export interface CommandCost {
  readonly command: string;
  readonly callsPerEntry: number;
  /** Redis's own time in the command (`usec`), µs per entry; a script's includes the commands it calls. */
  readonly usPerEntry: number;
}

/** `cmdstat_xadd:calls=3,usec=12,...` lines into counters by command name (`xadd`, `client|list`). */
export function parseCommandStats(text: string): Map<string, CommandCount> {
  const out = new Map<string, CommandCount>();
  for (const line of text.split(/\r?\n/)) {
    const match = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (match === null) continue;
    out.set(match[1] ?? '', { calls: Number(match[2]), usec: Number(match[3]) });
  }
  return out;
}

/** Counters of several nodes (a cluster's primaries) added per command. */
export function sumCommandStats(nodes: readonly ReadonlyMap<string, CommandCount>[]): Map<string, CommandCount> {
  const out = new Map<string, CommandCount>();
  for (const node of nodes)
    for (const [command, c] of node) {
      const known = out.get(command) ?? { calls: 0, usec: 0 };
      out.set(command, { calls: known.calls + c.calls, usec: known.usec + c.usec });
    }
  return out;
}

/** The counters' growth from `before` to `after` per delivered entry, costliest first; idle commands left out. */
export function commandCostPerEntry(
  before: ReadonlyMap<string, CommandCount>,
  after: ReadonlyMap<string, CommandCount>,
  entries: number,
): CommandCost[] {
  if (entries <= 0) return [];
  const rows: CommandCost[] = [];
  for (const [command, a] of after) {
    const b = before.get(command) ?? { calls: 0, usec: 0 };
    const calls = a.calls - b.calls;
    if (calls <= 0) continue;
    rows.push({ command, callsPerEntry: calls / entries, usPerEntry: (a.usec - b.usec) / entries });
  }
  return rows.sort((x, y) => y.usPerEntry - x.usPerEntry || y.callsPerEntry - x.callsPerEntry);
}

/** `xadd 1.000 × 2.10 µs, evalsha …` for the log: calls and µs per entry of each command. */
export function fmtCommandCosts(rows: readonly CommandCost[]): string {
  if (rows.length === 0) return 'no commands';
  return rows.map((r) => `${r.command} ${r.callsPerEntry.toFixed(3)}× ${r.usPerEntry.toFixed(2)} µs`).join(', ');
}
