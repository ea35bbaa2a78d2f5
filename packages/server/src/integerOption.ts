/**
 * An option that must be an integer from `min` to `max`: the value, or a RangeError naming the
 * option. Options are programmer input, often from plain JavaScript, so a wrong one fails where
 * it is given, not at the first call that uses it.
 */
export function integerOption(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}
