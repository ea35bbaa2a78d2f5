import type { VenueKind } from './venueSchemas.js';

/**
 * Coverage is observed, never intended: a symbol counts for a kind only once a payload of that
 * kind arrived, and stops counting when none arrived for `staleMs` — a session the venue went
 * quiet on must show as lost coverage, not as a subscription we believe in.
 */
export class CoverageMap {
  private readonly seen = new Map<string, Map<VenueKind, number>>();

  constructor(
    private readonly kinds: readonly VenueKind[],
    private readonly staleMs: number,
  ) {}

  /** Records a payload; kinds not declared are delivered elsewhere but never counted here. */
  observe(symbol: string, kind: VenueKind, at: number): void {
    if (!this.kinds.includes(kind)) return;
    let bySymbol = this.seen.get(symbol);
    if (bySymbol === undefined) {
      bySymbol = new Map();
      this.seen.set(symbol, bySymbol);
    }
    bySymbol.set(kind, at);
  }

  /** Symbols whose data certainly stopped (unsubscribed, their session dropped). */
  forget(symbols: Iterable<string>): void {
    for (const symbol of symbols) this.seen.delete(symbol);
  }

  byKind(wanted: ReadonlySet<string>, now: number): Record<VenueKind, Set<string>> {
    const out: Record<VenueKind, Set<string>> = { snapshot: new Set(), quote: new Set(), tick: new Set() };
    for (const [symbol, kinds] of this.seen) {
      if (!wanted.has(symbol)) continue;
      for (const [kind, at] of kinds) if (now - at <= this.staleMs) out[kind].add(symbol);
    }
    return out;
  }

  /** Counts for the operations snapshot: each declared kind (undeclared ones are never counted) and their union. */
  counts(wanted: ReadonlySet<string>, now: number): { covered: number; byKind: Partial<Record<VenueKind, number>> } {
    const byKind = this.byKind(wanted, now);
    return {
      covered: this.covered(wanted, now, byKind).size,
      byKind: Object.fromEntries(this.kinds.map((kind) => [kind, byKind[kind].size])),
    };
  }

  /** The exact union of the declared kinds' coverage (pass `byKind` when it was just computed). */
  covered(wanted: ReadonlySet<string>, now: number, byKind = this.byKind(wanted, now)): Set<string> {
    const out = new Set<string>();
    for (const kind of this.kinds) for (const symbol of byKind[kind]) out.add(symbol);
    return out;
  }
}
