/** What a keyspace event on a watched stream key asks of its reader. */
export type KeyspaceEventKind = 'written' | 'quiet' | 'suspect';

const QUIET_EVENTS = new Set(['xtrim', 'xdel', 'xclaim', 'xautoclaim']);

export function keyspaceEventKind(event: string): KeyspaceEventKind {
  if (event === 'xadd') return 'written';
  // Trims, deletions of entries and consumer-group changes add nothing to read and leave the
  // incarnation as it was; a trim follows many a capped XADD, so looking at the key would cost.
  if (QUIET_EVENTS.has(event) || event.startsWith('xgroup-')) return 'quiet';
  // del, rename, expired, xsetid…: the key may be gone or hold another incarnation.
  return 'suspect';
}
