import { CloseCode } from '@streamgate/protocol';

export interface AdmissionLimits {
  /** Open connections this pod holds at most. */
  readonly maxConnections: number;
  /** New connections per second, with a burst of the same size. */
  readonly maxConnectionsPerSecond: number;
}

export type Admission = { ok: true } | { ok: false; limit: 'connections' | 'connection_rate'; code: number; reason: string };

/**
 * Decides whether a new socket may stay. After a deploy every client of the old pods arrives at
 * once; a pod that takes them all at full speed spends its CPU on handshakes and token checks and
 * starves the sockets it already serves. The refused ones get a close code that says "back off,
 * preferably elsewhere", so the storm spreads over pods and time instead of piling up here.
 */
export class AdmissionControl {
  private tokens: number;
  private lastRefill: number;
  private open = 0;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.tokens = limits.maxConnectionsPerSecond;
    this.lastRefill = now();
  }

  get connections(): number {
    return this.open;
  }

  /** Call once per new socket; an admitted socket must be given back with `release()`. */
  admit(): Admission {
    if (this.open >= this.limits.maxConnections) {
      return {
        ok: false,
        limit: 'connections',
        code: CloseCode.overloaded,
        reason: `pod holds its maximum of ${this.limits.maxConnections} connections`,
      };
    }
    this.refill();
    if (this.tokens < 1) {
      return {
        ok: false,
        limit: 'connection_rate',
        code: CloseCode.connectionRateLimited,
        reason: `more than ${this.limits.maxConnectionsPerSecond} new connections per second`,
      };
    }
    this.tokens -= 1;
    this.open += 1;
    return { ok: true };
  }

  release(): void {
    if (this.open > 0) this.open -= 1;
  }

  private refill(): void {
    const t = this.now();
    const rate = this.limits.maxConnectionsPerSecond;
    this.tokens = Math.min(rate, this.tokens + ((t - this.lastRefill) / 1000) * rate);
    this.lastRefill = t;
  }
}
