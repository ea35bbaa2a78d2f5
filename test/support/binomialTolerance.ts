/**
 * The smallest k with P(|X − n·p| > k) ≤ alpha for X ~ Binomial(n, p), computed exactly.
 *
 * A relay drain gives each of its n connections an independent uniform delay in [0, window),
 * so the connections still open at a fraction f of the window are Binomial(n, 1 − f) around the
 * schedule n·(1 − f): this is how far one sample of a correct drain may stray from it.
 */
export function binomialTolerance(n: number, p: number, alpha: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n must be a non-negative integer, got ${n}`);
  if (!(p >= 0 && p <= 1)) throw new RangeError(`p must be in [0, 1], got ${p}`);
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  const mean = n * p;
  const pmf = binomialPmf(n, p);
  for (let k = 0; k <= n; k++) {
    let outside = 0;
    for (let x = 0; x <= n; x++) if (Math.abs(x - mean) > k) outside += pmf[x] ?? 0;
    if (outside <= alpha) return k;
  }
  return n;
}

function binomialPmf(n: number, p: number): number[] {
  if (p === 0 || p === 1) return Array.from({ length: n + 1 }, (_, x) => (x === n * p ? 1 : 0));
  // In logs: C(n, x) p^x (1−p)^(n−x) underflows for large n taken directly.
  const logFactorial = [0];
  for (let i = 1; i <= n; i++) logFactorial.push((logFactorial[i - 1] ?? 0) + Math.log(i));
  const lf = (i: number) => logFactorial[i] ?? 0;
  return Array.from({ length: n + 1 }, (_, x) => Math.exp(lf(n) - lf(x) - lf(n - x) + x * Math.log(p) + (n - x) * Math.log(1 - p)));
}
