import type { Recovery } from '@streamgate/protocol';

/** Counters the fan-out core reports; the app binds them to Prometheus. */
export interface HubMetrics {
  delivered(count: number, path: 'live' | 'catch-up'): void;
  malformedEntry(): void;
  catchUpPage(): void;
  slowConsumerCut(): void;
  /** A catching-up subscriber's pending bytes passed the pacing limit; it waits to drain. */
  catchUpPaused(): void;
  sourceError(operation: string): void;
  recovery(outcome: Recovery): void;
}

export const noHubMetrics: HubMetrics = {
  delivered: () => undefined,
  malformedEntry: () => undefined,
  catchUpPage: () => undefined,
  slowConsumerCut: () => undefined,
  catchUpPaused: () => undefined,
  sourceError: () => undefined,
  recovery: () => undefined,
};
