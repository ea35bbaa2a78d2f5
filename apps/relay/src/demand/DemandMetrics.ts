import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/** The demand reporter's metrics, per Redis target its heartbeats go to. */
export class DemandMetrics {
  private readonly heartbeats: Counter<'target' | 'outcome'>;
  private readonly streams: Gauge<'target'>;

  constructor(registry: Registry) {
    this.heartbeats = new Counter({
      name: 'streamgate_relay_demand_heartbeats_total',
      help: "Demand heartbeats by Redis target and outcome (sent, failed); a target's heartbeat carries the streams of its own and, on the JetStream demand target, of every JetStream target",
      labelNames: ['target', 'outcome'] as const,
      registers: [registry],
    });
    this.streams = new Gauge({
      name: 'streamgate_relay_demand_streams',
      help: 'Streams in the last demand heartbeat sent to each Redis target',
      labelNames: ['target'] as const,
      registers: [registry],
    });
  }

  /** A heartbeat carrying `streams` streams was sent to `target`; 0: it had none to carry, none was sent. */
  reported(target: string, streams: number): void {
    if (streams > 0) this.heartbeats.inc({ target, outcome: 'sent' });
    this.streams.set({ target }, streams);
  }

  failed(target: string): void {
    this.heartbeats.inc({ target, outcome: 'failed' });
  }
}
