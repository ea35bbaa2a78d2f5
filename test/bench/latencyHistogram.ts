import { build } from 'hdr-histogram-js';
import type { Histogram } from 'hdr-histogram-js';

/**
 * The one shape of every latency histogram the bench keeps (the load clients', the fleet's sum
 * of them, the publisher's writes): microseconds, up to 100 s, three significant digits, so they
 * can be added to one another.
 */
export function newLatencyHistogram(): Histogram {
  return build({ bitBucketSize: 32, lowestDiscernibleValue: 1, highestTrackableValue: 100_000_000, numberOfSignificantValueDigits: 3 });
}
