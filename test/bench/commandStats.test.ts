import { describe, expect, it } from 'vitest';
import { commandCostPerEntry, fmtCommandCosts, parseCommandStats, sumCommandStats } from './commandStats.js';

const BEFORE = [
  '# Commandstats',
  'cmdstat_xadd:calls=10,usec=50,usec_per_call=5.00,rejected_calls=0,failed_calls=0',
  'cmdstat_evalsha:calls=10,usec=200,usec_per_call=20.00,rejected_calls=0,failed_calls=0',
  'cmdstat_client|list:calls=1,usec=9,usec_per_call=9.00,rejected_calls=0,failed_calls=0',
].join('\r\n');
const AFTER = [
  '# Commandstats',
  'cmdstat_xadd:calls=110,usec=550,usec_per_call=5.00,rejected_calls=0,failed_calls=0',
  'cmdstat_evalsha:calls=110,usec=2200,usec_per_call=20.00,rejected_calls=0,failed_calls=0',
  'cmdstat_client|list:calls=1,usec=9,usec_per_call=9.00,rejected_calls=0,failed_calls=0',
  'cmdstat_xread:calls=5,usec=40,usec_per_call=8.00,rejected_calls=0,failed_calls=0',
].join('\r\n');

describe('commandStats', () => {
  it('parses calls and usec per command, subcommands included', () => {
    const stats = parseCommandStats(BEFORE);
    expect(stats.get('xadd')).toEqual({ calls: 10, usec: 50 });
    expect(stats.get('client|list')).toEqual({ calls: 1, usec: 9 });
    expect(stats.size).toBe(3);
  });

  it('gives the growth per delivered entry, costliest first, leaving idle commands out', () => {
    const rows = commandCostPerEntry(parseCommandStats(BEFORE), parseCommandStats(AFTER), 100);
    expect(rows).toEqual([
      { command: 'evalsha', callsPerEntry: 1, usPerEntry: 20 },
      { command: 'xadd', callsPerEntry: 1, usPerEntry: 5 },
      { command: 'xread', callsPerEntry: 0.05, usPerEntry: 0.4 },
    ]);
    expect(fmtCommandCosts(rows)).toBe('evalsha 1.000× 20.00 µs, xadd 1.000× 5.00 µs, xread 0.050× 0.40 µs');
    expect(commandCostPerEntry(parseCommandStats(BEFORE), parseCommandStats(AFTER), 0)).toEqual([]);
  });

  it('adds the nodes of a cluster per command', () => {
    const sum = sumCommandStats([parseCommandStats(BEFORE), parseCommandStats(AFTER)]);
    expect(sum.get('xadd')).toEqual({ calls: 120, usec: 600 });
    expect(sum.get('xread')).toEqual({ calls: 5, usec: 40 });
  });
});
