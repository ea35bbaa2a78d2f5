import type { RunEnd } from '@streamgate/ingest-core';
import type { ProviderConfig } from '../config.js';
import type { RpcSocket } from './RpcSocket.js';

/** A live newHeads subscription: the only place a run's socket and provider are held. */
export interface HeadLink {
  readonly provider: ProviderConfig;
  readonly socket: RpcSocket;
  readonly subscriptionId: string;
}

/**
 * The failover state machine of one stream run (after Lasso's StreamCoordinator):
 * - `switching`: subscribing on candidates by priority, cascading; the run's first state.
 * - `active`: one live subscription. Failing back to the preferred provider is `active → active`
 *   (make-before-break: the new subscription takes before the old one closes).
 * - `backfilling`: the live socket failed; the HTTP head is queued for gap-fill before switching.
 * - `degraded`: too many failovers in the window, or no provider would subscribe; the stream
 *   follows the head oracle over HTTP until a timer tries sockets again.
 * - `stopped`: stopped, fenced, failed or halted; final.
 */
export type RunPhase =
  | { readonly state: 'switching' }
  | { readonly state: 'active'; readonly link: HeadLink }
  | { readonly state: 'backfilling' }
  | { readonly state: 'degraded' }
  | { readonly state: 'stopped'; readonly end: RunEnd };

export type RunState = RunPhase['state'];

const MOVES: Record<RunState, readonly RunState[]> = {
  switching: ['switching', 'active', 'degraded', 'stopped'],
  active: ['active', 'backfilling', 'degraded', 'stopped'],
  backfilling: ['switching', 'degraded', 'stopped'],
  degraded: ['switching', 'stopped'],
  stopped: [],
};

/** Whether the machine may go from `from` to `to`; anything else is a bug in the run. */
export function canMove(from: RunState, to: RunState): boolean {
  return MOVES[from].includes(to);
}
