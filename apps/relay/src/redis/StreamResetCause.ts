/**
 * Why a watched stream was read again from its start: `recreated`, its key was deleted (or
 * renamed) and written again; `lost_in_failover`, an entry the relay read and delivered is gone
 * although it was neither trimmed nor deleted with XDEL, which is what a failover to a replica
 * that had not copied it leaves (docs/protocol.md §6).
 */
export type StreamResetCause = 'recreated' | 'lost_in_failover';

export const STREAM_RESET_CAUSES: readonly StreamResetCause[] = ['recreated', 'lost_in_failover'];
