import { describe, expect, it } from 'vitest';
import { CoverageMap } from './CoverageMap.js';
import type { VenueKind } from './venueSchemas.js';

const STALE_MS = 1_000;
const all = (...symbols: string[]) => new Set(symbols);

describe('CoverageMap', () => {
  it('counts nothing until a payload arrives: being wanted is not being covered', () => {
    const map = new CoverageMap(['snapshot', 'quote'], STALE_MS);
    const wanted = all('AAA', 'BBB');
    expect(map.covered(wanted, 0)).toEqual(new Set());
    expect(map.byKind(wanted, 0)).toEqual({ snapshot: new Set(), quote: new Set(), tick: new Set() });
    map.observe('AAA', 'quote', 100);
    expect(map.covered(wanted, 100)).toEqual(all('AAA'));
    expect(map.byKind(wanted, 100)).toEqual({ snapshot: new Set(), quote: all('AAA'), tick: new Set() });
  });

  it('keeps each kind apart: a symbol whose snapshot went dark while quotes keep arriving shows it', () => {
    const map = new CoverageMap(['snapshot', 'quote'], STALE_MS);
    const wanted = all('AAA');
    map.observe('AAA', 'snapshot', 0);
    map.observe('AAA', 'quote', 0);
    map.observe('AAA', 'quote', 900);
    map.observe('AAA', 'quote', 1_800);
    const byKind = map.byKind(wanted, 1_800);
    expect(byKind.snapshot).toEqual(new Set());
    expect(byKind.quote).toEqual(all('AAA'));
    expect(map.covered(wanted, 1_800)).toEqual(all('AAA'));
  });

  it('a symbol stops counting once no payload arrived for longer than staleMs', () => {
    const map = new CoverageMap(['snapshot'], STALE_MS);
    const wanted = all('AAA');
    map.observe('AAA', 'snapshot', 5_000);
    expect(map.covered(wanted, 5_000 + STALE_MS)).toEqual(all('AAA'));
    expect(map.covered(wanted, 5_000 + STALE_MS + 1)).toEqual(new Set());
    expect(map.byKind(wanted, 5_000 + STALE_MS + 1).snapshot).toEqual(new Set());
    // A fresh payload brings it back.
    map.observe('AAA', 'snapshot', 7_000);
    expect(map.covered(wanted, 7_000)).toEqual(all('AAA'));
  });

  it('never counts an undeclared kind, not even in covered()', () => {
    const map = new CoverageMap(['snapshot', 'quote'], STALE_MS);
    const wanted = all('AAA', 'BBB');
    map.observe('AAA', 'tick', 0);
    map.observe('BBB', 'tick', 0);
    map.observe('BBB', 'quote', 0);
    expect(map.byKind(wanted, 0)).toEqual({ snapshot: new Set(), quote: all('BBB'), tick: new Set() });
    expect(map.covered(wanted, 0)).toEqual(all('BBB'));
  });

  it('covered() is exactly the union of the declared kinds, whatever arrived', () => {
    const declared: VenueKind[] = ['snapshot', 'quote', 'tick'];
    const map = new CoverageMap(declared, STALE_MS);
    const wanted = all('A', 'B', 'C', 'D', 'E');
    map.observe('A', 'snapshot', 0);
    map.observe('B', 'quote', 500);
    map.observe('C', 'tick', 900);
    map.observe('D', 'snapshot', 0);
    map.observe('D', 'tick', 1_400);
    map.observe('UNWANTED', 'quote', 1_400);
    for (const now of [0, 600, 1_000, 1_200, 1_600, 2_500]) {
      const byKind = map.byKind(wanted, now);
      const union = new Set(declared.flatMap((kind) => [...byKind[kind]]));
      expect(map.covered(wanted, now)).toEqual(union);
    }
    expect(map.covered(wanted, 1_200)).toEqual(all('B', 'C', 'D'));
  });

  it('reports only wanted symbols, even ones it saw payloads for', () => {
    const map = new CoverageMap(['quote'], STALE_MS);
    map.observe('AAA', 'quote', 0);
    map.observe('BBB', 'quote', 0);
    expect(map.covered(all('AAA'), 0)).toEqual(all('AAA'));
    expect(map.byKind(all('BBB'), 0).quote).toEqual(all('BBB'));
  });

  it('forget() drops every kind of the named symbols and only those, until a new payload', () => {
    const map = new CoverageMap(['snapshot', 'quote'], STALE_MS);
    const wanted = all('AAA', 'BBB');
    map.observe('AAA', 'snapshot', 0);
    map.observe('AAA', 'quote', 0);
    map.observe('BBB', 'quote', 0);
    map.forget(['AAA', 'NEVER_SEEN']);
    expect(map.covered(wanted, 0)).toEqual(all('BBB'));
    expect(map.byKind(wanted, 0)).toEqual({ snapshot: new Set(), quote: all('BBB'), tick: new Set() });
    map.observe('AAA', 'snapshot', 10);
    expect(map.covered(wanted, 10)).toEqual(all('AAA', 'BBB'));
  });

  it('counts() names only the declared kinds, each against the wanted set, and their union', () => {
    const map = new CoverageMap(['snapshot', 'quote'], STALE_MS);
    map.observe('AAA', 'snapshot', 0);
    map.observe('AAA', 'quote', 0);
    map.observe('BBB', 'quote', 0);
    map.observe('BBB', 'tick', 0);
    map.observe('UNWANTED', 'quote', 0);
    map.observe('OLD', 'snapshot', -STALE_MS - 1);
    expect(map.counts(all('AAA', 'BBB', 'CCC', 'OLD'), 0)).toEqual({ covered: 2, byKind: { snapshot: 1, quote: 2 } });
  });
});
