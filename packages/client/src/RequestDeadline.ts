import type { Clock } from '@streamgate/protocol';

/** How long a subscribe or refresh may go unanswered, and the clock that measures it. */
export interface RequestDeadline {
  readonly clock: Clock;
  readonly timeoutMs: number;
}
