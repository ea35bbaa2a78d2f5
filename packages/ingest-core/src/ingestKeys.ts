/**
 * Redis keys ingest keeps beside a stream. The stream name sits in a hash tag so a key's lease,
 * fence, state and dedupe keys share one cluster slot (the stream itself is the plain name the
 * relay reads, so a cluster deployment must place streams in the same slot by naming them with
 * the same tag; standalone Redis has no such constraint).
 */
export function ingestKeys(prefix: string, key: string) {
  const base = `${prefix}{${key}}`;
  return {
    lease: `${base}:lease`,
    fence: `${base}:fence`,
    state: `${base}:state`,
    dedupe: (id: string) => `${base}:d:${id}`,
  };
}
