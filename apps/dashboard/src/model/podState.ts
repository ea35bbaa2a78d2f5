import { OPS_STALE_AFTER_MS } from '@streamgate/ops';
import type { OpsSnapshot } from '@streamgate/ops';

export type PodState = 'live' | 'stale' | 'draining';

/**
 * `now` is on the pods' clock (the browser's minus its skew). Staleness comes first: a pod that
 * stopped publishing mid-drain has exited, or cannot say how its drain goes.
 */
export function podState(snapshot: OpsSnapshot, now: number): PodState {
  if (now - snapshot.at > OPS_STALE_AFTER_MS) return 'stale';
  if (snapshot.kind === 'relay' && snapshot.drain !== null) return 'draining';
  return 'live';
}
