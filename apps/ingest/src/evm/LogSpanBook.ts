/** Successes at the full learned span before a wider span is tried. */
const GROW_AFTER = 8;
/** How long a refused width caps growth: a provider's limit rarely changes, but it may. */
const CEILING_MS = 10 * 60_000;

interface Learned {
  span: number;
  /** The widest query accepted since the span last shrank (0: none yet). */
  good: number;
  streak: number;
  refusedWidth: number;
  refusedAt: number;
}

/**
 * The widest eth_getLogs range each provider is known to accept. A refusal halves the span (or
 * takes the provider's own figure), or, when a wider try was refused, falls back to the widest
 * width that worked. After a run of full-width successes the span grows by half, but not past
 * the midpoint to a width refused in the last ten minutes, so a provider with a fixed limit is
 * found in a few refusals and then left alone. Shared by every stream of a chain, so one
 * stream's lesson spares the others the refusal.
 */
export class LogSpanBook {
  private readonly learned = new Map<string, Learned>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The span to use for `provider`, at most `max` (the configured range). */
  span(provider: string, max: number): number {
    return Math.min(max, this.learned.get(provider)?.span ?? max);
  }

  refused(provider: string, width: number, max: number, hint?: number): void {
    const now = this.now();
    const known = this.learned.get(provider);
    const ceilingFresh = known !== undefined && now - known.refusedAt < CEILING_MS;
    let span: number;
    if (hint !== undefined && hint < width) span = hint;
    else if (known !== undefined && known.good > 0 && known.good < width) span = known.good;
    else span = Math.floor(width / 2);
    span = Math.max(1, Math.min(known?.span ?? max, span));
    this.learned.set(provider, {
      span,
      good: known !== undefined && known.good <= span ? known.good : 0,
      streak: 0,
      refusedWidth: ceilingFresh ? Math.min(known.refusedWidth, width) : width,
      refusedAt: now,
    });
  }

  accepted(provider: string, width: number, max: number): void {
    const known = this.learned.get(provider);
    // A narrower query (the tail of a range) says nothing about the span.
    if (known === undefined || width < known.span) return;
    known.good = Math.max(known.good, width);
    known.streak += 1;
    if (known.streak < GROW_AFTER) return;
    known.streak = 0;
    const ceilingFresh = this.now() - known.refusedAt < CEILING_MS;
    const cap = ceilingFresh ? Math.floor((known.span + known.refusedWidth) / 2) : max;
    known.span = Math.max(known.span, Math.min(max, cap, known.span + Math.max(1, Math.floor(known.span / 2))));
    if (known.span >= max && !ceilingFresh) this.learned.delete(provider);
  }
}
