import type { Logger } from 'pino';
import type { RelayMetrics } from './RelayMetrics.js';
import type { StreamHub } from './core/StreamHub.js';
import { TargetHealthWatch } from './core/TargetHealthWatch.js';

export interface WatchTargetsOptions {
  /** One hub per allowlisted target, keyed by the target (normalized, no credentials). */
  readonly hubs: ReadonlyMap<string, StreamHub>;
  /** RELAY_REDIS_DOWN_AFTER_MS */
  readonly downAfterMs: number;
  readonly metrics: RelayMetrics;
  readonly log: Logger;
  /** Sampling period. Default 250 ms: a down target is acted on within downAfterMs + this. */
  readonly checkMs?: number;
}

export interface TargetWatches {
  /** At least one target answers now: the readiness rule's Redis part. */
  anyHealthy(): boolean;
  /** Samples every target, then one line per target, `<target> up|unhealthy|down`, for the /readyz body. */
  describe(): string;
  /** Samples every target now (also done every checkMs). */
  check(): void;
  close(): void;
}

/**
 * Samples every target's health on one timer: sets `streamgate_relay_redis_target_up`, and ends
 * the subscriptions of a target that stayed unreachable for `downAfterMs` (StreamHub
 * markUnavailable) until it answers again. Each target is judged alone.
 */
export function watchTargets(options: WatchTargetsOptions): TargetWatches {
  const { hubs, metrics, log } = options;
  const watches = new Map<string, TargetHealthWatch>();
  for (const [target, hub] of hubs) {
    watches.set(
      target,
      new TargetHealthWatch({
        healthy: () => hub.healthy,
        unansweredForMs: () => hub.unansweredForMs,
        downAfterMs: options.downAfterMs,
        now: () => performance.now(),
        // Sampled every checkMs: a gap of four periods (at least a second) is the pod's own stall.
        starvedGapMs: Math.max(1_000, 4 * (options.checkMs ?? 250)),
        onDown: (unhealthyForMs) => {
          metrics.redisTargetsDown.inc({ target });
          log.warn(
            { target, unhealthyForMs: Math.round(unhealthyForMs), subscriptions: hub.subscriberCount },
            'redis target unreachable: ending its subscriptions with stream_unavailable (clients resubscribe with backoff)',
          );
          hub.markUnavailable(`the stream's Redis has not answered for ${Math.round(unhealthyForMs)} ms; subscribe again later`);
        },
        onUp: (downForMs) => {
          log.info({ target, downForMs: Math.round(downForMs) }, 'redis target answers again: subscriptions served');
          hub.markAvailable();
        },
      }),
    );
  }
  const check = (): void => {
    for (const [target, watch] of watches) metrics.redisTargetUp.set({ target }, watch.check() === 'up' ? 1 : 0);
  };
  check();
  const timer = setInterval(check, options.checkMs ?? 250);
  timer.unref();
  return {
    anyHealthy: () => [...hubs.values()].some((h) => h.healthy),
    describe: () => {
      check();
      return [...watches].map(([target, watch]) => `${target} ${watch.state}`).join('\n');
    },
    check,
    close: () => clearInterval(timer),
  };
}
