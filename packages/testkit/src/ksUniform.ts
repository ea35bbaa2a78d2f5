/** Result of a one-sample Kolmogorov–Smirnov test against the uniform distribution. */
export interface KsResult {
  readonly n: number;
  /** sup |F_n(x) − F(x)| */
  readonly d: number;
  /** Asymptotic critical value of D at the significance level asked for. */
  readonly critical: number;
  /** True when uniformity is not rejected: d ≤ critical. */
  readonly pass: boolean;
}

/**
 * One-sample KS test of `samples` against U(low, high) at significance `alpha`. The critical
 * value is the asymptotic c(α)/√n with c(α) = √(−ln(α/2)/2) (1.628 at α = 0.01), accurate for
 * the hundreds-to-thousands of samples the drain and token-refresh tests take.
 */
export function ksUniform(samples: readonly number[], low: number, high: number, alpha = 0.01): KsResult {
  const n = samples.length;
  if (n === 0) throw new RangeError('ksUniform needs at least one sample');
  if (!(high > low)) throw new RangeError('ksUniform needs high > low');
  const sorted = [...samples].sort((a, b) => a - b);
  let d = 0;
  for (let i = 0; i < n; i++) {
    const x = sorted[i] ?? Number.NaN;
    if (Number.isNaN(x)) throw new RangeError('ksUniform: samples must be numbers');
    const cdf = Math.min(1, Math.max(0, (x - low) / (high - low)));
    // The empirical CDF jumps from i/n to (i+1)/n at x: the gap is largest at one of the two.
    d = Math.max(d, (i + 1) / n - cdf, cdf - i / n);
  }
  const critical = Math.sqrt(-Math.log(alpha / 2) / 2) / Math.sqrt(n);
  return { n, d, critical, pass: d <= critical };
}
