import type { ReadMode } from './LiveReader.js';

/**
 * The read mode a `CONFIG GET notify-keyspace-events` reply allows: notifications for stream
 * commands need keyspace events (`K`) of the stream class (`t`, or `A` for all classes).
 */
export function readModeReply(reply: unknown): ReadMode {
  if (!Array.isArray(reply)) return 'batch';
  const value: unknown = reply[1];
  const flags = typeof value === 'string' ? value : Buffer.isBuffer(value) ? value.toString('latin1') : '';
  return flags.includes('K') && (flags.includes('t') || flags.includes('A')) ? 'notify' : 'batch';
}
