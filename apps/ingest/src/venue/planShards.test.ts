import { describe, expect, it } from 'vitest';
import { prng } from '@streamgate/testkit';
import { planShards } from './planShards.js';
import type { ShardPlan, ShardState } from './planShards.js';

const sym = (i: number) => `S${String(i).padStart(4, '0')}`;
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => sym(from + i));

/** Feeds a plan back in as the next call's shards, with per-index capacities (default 100). */
function asState(plan: ShardPlan, capacity: ReadonlyMap<number, number> = new Map()): ShardState[] {
  return plan.shards.map((s) => ({ index: s.index, symbols: s.symbols, capacity: capacity.get(s.index) ?? 100 }));
}

function shardOf(plan: ShardPlan): Map<string, number> {
  const where = new Map<string, number>();
  for (const s of plan.shards) for (const symbol of s.symbols) where.set(symbol, s.index);
  return where;
}

const base = planShards({ shards: [], wanted: range(0, 342), maxShards: 5, defaultCapacity: 100 });

describe('planShards', () => {
  it('spreads 342 symbols lowest index first, 100 a shard', () => {
    expect(base.shards.map((s) => [s.index, s.symbols.length])).toEqual([
      [0, 100],
      [1, 100],
      [2, 100],
      [3, 42],
    ]);
    expect(base.unplaced).toEqual([]);
  });

  it('adding one symbol moves none of the others, even one that sorts first', () => {
    for (const added of ['A0000', 'S0200X', 'ZZZ']) {
      const next = planShards({ shards: asState(base), wanted: [added, ...range(0, 342)], maxShards: 5, defaultCapacity: 100 });
      const before = shardOf(base);
      const after = shardOf(next);
      for (const [symbol, index] of before) expect(after.get(symbol)).toBe(index);
      expect(after.get(added)).toBe(3);
      expect(next.shards.map((s) => s.symbols.length)).toEqual([100, 100, 100, 43]);
    }
  });

  it('removing one symbol changes only its shard', () => {
    const wanted = range(0, 342).filter((s) => s !== sym(150));
    const next = planShards({ shards: asState(base), wanted, maxShards: 5, defaultCapacity: 100 });
    expect(next.shards[1]?.symbols).toEqual(base.shards[1]?.symbols.filter((s) => s !== sym(150)));
    for (const i of [0, 2, 3]) expect(next.shards[i]).toEqual(base.shards[i]);
  });

  it('a capacity cut from 100 to 80 evicts only the 20 most recently added, into shards with room', () => {
    const next = planShards({ shards: asState(base, new Map([[1, 80]])), wanted: range(0, 342), maxShards: 5, defaultCapacity: 100 });
    expect(next.shards[1]?.symbols).toEqual(range(100, 180));
    expect(next.shards[0]).toEqual(base.shards[0]);
    expect(next.shards[2]).toEqual(base.shards[2]);
    expect(next.shards[3]?.symbols).toEqual([...range(300, 342), ...range(180, 200)]);
    expect(next.unplaced).toEqual([]);
  });

  it('opens new shards (lowest free index) up to maxShards; what still cannot fit is unplaced', () => {
    // 390 symbols: shards 0-2 full, shard 3 holds 90.
    const full = planShards({ shards: [], wanted: range(0, 390), maxShards: 4, defaultCapacity: 100 });
    expect(full.shards.map((s) => s.symbols.length)).toEqual([100, 100, 100, 90]);
    const cut = new Map([[0, 80]]);

    const five = planShards({ shards: asState(full, cut), wanted: range(0, 390), maxShards: 5, defaultCapacity: 100 });
    expect(five.shards.map((s) => [s.index, s.symbols.length])).toEqual([
      [0, 80],
      [1, 100],
      [2, 100],
      [3, 100],
      [4, 10],
    ]);
    expect(five.shards[3]?.symbols.slice(90)).toEqual(range(80, 90));
    expect(five.shards[4]?.symbols).toEqual(range(90, 100));

    const four = planShards({ shards: asState(full, cut), wanted: range(0, 390), maxShards: 4, defaultCapacity: 100 });
    expect(four.shards.map((s) => s.symbols.length)).toEqual([80, 100, 100, 100]);
    expect(four.unplaced).toEqual(range(90, 100));

    // A gap in the indices is filled before a new index is taken.
    const gap = planShards({
      shards: [
        { index: 1, symbols: ['A'], capacity: 1 },
        { index: 3, symbols: ['B'], capacity: 1 },
      ],
      wanted: ['A', 'B', 'C', 'D', 'E'],
      maxShards: 4,
      defaultCapacity: 1,
    });
    expect(gap).toEqual({
      shards: [
        { index: 0, symbols: ['C'] },
        { index: 1, symbols: ['A'] },
        { index: 2, symbols: ['D'] },
        { index: 3, symbols: ['B'] },
      ],
      unplaced: ['E'],
    });
  });

  it('keeps emptied shards in the plan, drops duplicates (lower index wins) and repeated wanted entries', () => {
    const plan = planShards({
      shards: [
        { index: 2, symbols: ['X', 'Y', 'X'], capacity: 10 },
        { index: 0, symbols: ['OLD'], capacity: 10 },
        { index: 1, symbols: ['Y'], capacity: 10 },
      ],
      wanted: ['X', 'Y', 'Y', 'Z'],
      maxShards: 3,
      defaultCapacity: 10,
    });
    expect(plan).toEqual({
      shards: [
        { index: 0, symbols: ['Z'] },
        { index: 1, symbols: ['Y'] },
        { index: 2, symbols: ['X'] },
      ],
      unplaced: [],
    });
  });

  it('refuses a configuration that could open a shard holding nothing', () => {
    expect(() => planShards({ shards: [], wanted: ['A'], maxShards: 5, defaultCapacity: 0 })).toThrow(RangeError);
    expect(() => planShards({ shards: [], wanted: ['A'], maxShards: -1, defaultCapacity: 1 })).toThrow(RangeError);
  });

  it('holds its invariants over random add/remove/capacity sequences (seeded)', () => {
    let sawUnplaced = 0;
    let sawCut = 0;
    for (const seed of [1, 7, 42, 2024, 99_991]) {
      const random = prng(seed);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
      const maxShards = 5;
      const universe = range(0, 700);
      let wanted: string[] = range(0, 200);
      const capacity = new Map<number, number>();
      let plan = planShards({ shards: [], wanted, maxShards, defaultCapacity: 100 });

      for (let step = 0; step < 300; step++) {
        const prev = plan;
        const prevCapacity = new Map(capacity);
        const roll = random();
        let op: { kind: 'add' | 'remove'; symbol: string } | { kind: 'other' } = { kind: 'other' };
        if (roll < 0.3) {
          const current = new Set(wanted);
          const candidates = universe.filter((s) => !current.has(s));
          const symbol = pick(candidates);
          wanted = [...wanted, symbol];
          op = { kind: 'add', symbol };
        } else if (roll < 0.6 && wanted.length > 0) {
          const symbol = pick(wanted);
          wanted = wanted.filter((s) => s !== symbol);
          op = { kind: 'remove', symbol };
        } else if (roll < 0.75) {
          const n = 1 + Math.floor(random() * 60);
          const current = new Set(wanted);
          const fresh = universe.filter((s) => !current.has(s)).slice(0, n);
          wanted = random() < 0.5 ? [...fresh, ...wanted] : [...wanted, ...fresh];
        } else if (roll < 0.85) {
          wanted = wanted.filter(() => random() < 0.8);
        } else if (prev.shards.length > 0) {
          capacity.set(pick(prev.shards).index, 40 + Math.floor(random() * 61));
        }

        plan = planShards({ shards: asState(prev, capacity), wanted, maxShards, defaultCapacity: 100 });
        const again = planShards({ shards: asState(prev, capacity), wanted, maxShards, defaultCapacity: 100 });
        expect(JSON.stringify(again), 'deterministic').toBe(JSON.stringify(plan));

        const placed = plan.shards.flatMap((s) => s.symbols);
        const wantedSet = new Set(wanted);
        const violations: string[] = [];
        if (new Set(placed).size !== placed.length) violations.push('a symbol on two shards');
        if (placed.length + plan.unplaced.length !== wantedSet.size) violations.push('placed + unplaced is not the wanted count');
        for (const s of [...placed, ...plan.unplaced]) if (!wantedSet.has(s)) violations.push(`${s} placed but not wanted`);
        for (const s of plan.shards) {
          const cap = capacity.get(s.index) ?? 100;
          if (s.symbols.length > cap) violations.push(`shard ${s.index} over capacity`);
          if (plan.unplaced.length > 0 && s.symbols.length < cap) violations.push(`unplaced while shard ${s.index} has room`);
        }
        if (plan.unplaced.length > 0 && plan.shards.length < maxShards) violations.push('unplaced while a shard could be opened');
        if (plan.unplaced.length > 0) sawUnplaced++;

        // Sticky: each shard starts with what it had, minus the unwanted, cut to its capacity.
        for (const before of prev.shards) {
          const kept = before.symbols.filter((s) => wantedSet.has(s)).slice(0, capacity.get(before.index) ?? 100);
          const after = plan.shards.find((s) => s.index === before.index)?.symbols ?? [];
          if (kept.some((s, i) => after[i] !== s)) violations.push(`shard ${before.index} not sticky`);
        }
        const capacityUnchanged = [...capacity].every(([i, c]) => prevCapacity.get(i) === c);
        if (!capacityUnchanged) sawCut++;
        if (op.kind === 'add' && capacityUnchanged) {
          const after = shardOf(plan);
          for (const [symbol, index] of shardOf(prev)) if (after.get(symbol) !== index) violations.push(`add moved ${symbol}`);
        }
        if (op.kind === 'remove') {
          const home = shardOf(prev).get(op.symbol);
          for (const before of prev.shards) {
            const after = plan.shards.find((s) => s.index === before.index);
            if (before.index !== home && JSON.stringify(after) !== JSON.stringify(before))
              violations.push(`remove touched shard ${before.index}`);
          }
        }
        expect(violations, `seed ${seed} step ${step}`).toEqual([]);
      }
    }
    // The sequences must actually reach the interesting regimes, or the invariants prove little.
    expect(sawUnplaced).toBeGreaterThan(20);
    expect(sawCut).toBeGreaterThan(20);
  });
});
