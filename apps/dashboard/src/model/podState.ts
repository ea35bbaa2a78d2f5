import { OPS_STALE_AFTER_MS } from '@streamgate/ops';
import type { OpsSnapshot } from '@streamgate/ops';

export type PodState = 'live' | 'stale' | 'draining' | 'drained';

/**
 * `now` is on the pods' clock (the browser's minus its skew). A relay whose last snapshot says
 * its drain ended has exited on purpose: `drained` however long ago, never `stale` like a dead
 * pod. Otherwise staleness comes first: a pod that stopped publishing mid-drain has died, or
 * cannot say how its drain goes.
 */
export function podState(snapshot: OpsSnapshot, now: number): PodState {
  if (snapshot.kind === 'relay' && snapshot.drain !== null && snapshot.drain.outcome !== null) return 'drained';
  if (now - snapshot.at > OPS_STALE_AFTER_MS) return 'stale';
  if (snapshot.kind === 'relay' && snapshot.drain !== null) return 'draining';
  return 'live';
}
