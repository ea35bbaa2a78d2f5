/**
 * The streams no prefix covers. Relays and auth register demand only for streams under their
 * demand prefixes, and ingest serves a stream only while it is in demand: a topology stream
 * outside every prefix is configured but can never be served, without any error on either side.
 */
export function streamsOutsidePrefixes(streams: Iterable<string>, prefixes: readonly string[]): string[] {
  return [...streams].filter((stream) => !prefixes.some((prefix) => stream.startsWith(prefix))).sort();
}
