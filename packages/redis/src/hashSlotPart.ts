/**
 * The part of a key Redis Cluster hashes: the text between the first `{` and the first `}` after
 * it when that text is not empty (a hash tag), otherwise the whole key.
 */
export function hashSlotPart(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}
