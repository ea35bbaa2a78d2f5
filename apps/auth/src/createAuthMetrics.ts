import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RelayTokenObserver } from '@streamgate/server';

export type AuthMetrics = {
  registry: Registry;
  tokenRequests: Counter<'procedure'>;
  tokensIssued: Counter<'procedure'>;
  tokenDenials: Counter<'procedure'>;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
  demandRegistrations: Counter<'outcome'>;
  /** tRPC requests answered with an error, by code (the label is only the code: paths are the caller's to invent). */
  refusals: Counter<'code'>;
  opsSnapshots: Counter;
  opsSnapshotFailures: Counter<'code'>;
  /** Counts one refused request, in the metric and in `counts`. */
  refused(code: string): void;
  /** The operations snapshot's figures, from the same increments as the metrics (prom-client reads are async). */
  readonly counts: { readonly tokensIssued: number; readonly refusals: ReadonlyMap<string, number> };
  /** Pass to relayTokenProcedure so that token procedures report into this registry. */
  observer: RelayTokenObserver;
};

/** The auth service's metrics, on a registry of their own so that tests can run servers side by side. */
export function createAuthMetrics({ defaultMetrics = false }: { defaultMetrics?: boolean } = {}): AuthMetrics {
  const registry = new Registry();
  if (defaultMetrics) collectDefaultMetrics({ register: registry });
  const tokenRequests = new Counter({
    name: 'streamgate_auth_token_requests_total',
    help: 'Calls to token procedures (each runs the product authorization once)',
    labelNames: ['procedure'] as const,
    registers: [registry],
  });
  const tokensIssued = new Counter({
    name: 'streamgate_auth_tokens_issued_total',
    help: 'Relay tokens minted',
    labelNames: ['procedure'] as const,
    registers: [registry],
  });
  const tokenDenials = new Counter({
    name: 'streamgate_auth_token_denials_total',
    help: 'Token requests the product authorization denied',
    labelNames: ['procedure'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'streamgate_auth_http_request_duration_seconds',
    help: 'HTTP request durations by route',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const demandRegistrations = new Counter({
    name: 'streamgate_auth_demand_registrations_total',
    help: 'Ingest demand registered when minting tokens for ingest-backed streams, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'streamgate_auth_refusals_total',
    help: 'tRPC requests answered with an error, by tRPC code (FORBIDDEN: authorization denied; UNAUTHORIZED: no or wrong operator credential)',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  const opsSnapshots = new Counter({
    name: 'streamgate_auth_ops_snapshots_total',
    help: 'Operations snapshots written to the operations stream',
    registers: [registry],
  });
  const opsSnapshotFailures = new Counter({
    name: 'streamgate_auth_ops_snapshot_failures_total',
    help: 'Operations snapshots not written, by cause (sink_failed: Redis; collect_failed: collecting it threw; too_large, invalid_snapshot: a bug)',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  const counts = { tokensIssued: 0, refusals: new Map<string, number>() };
  return {
    registry,
    refusals,
    opsSnapshots,
    opsSnapshotFailures,
    counts,
    refused: (code) => {
      refusals.inc({ code });
      counts.refusals.set(code, (counts.refusals.get(code) ?? 0) + 1);
    },
    demandRegistrations,
    tokenRequests,
    tokensIssued,
    tokenDenials,
    httpDuration,
    observer: {
      requested: ({ path }) => tokenRequests.inc({ procedure: path }),
      issued: ({ path }) => {
        tokensIssued.inc({ procedure: path });
        counts.tokensIssued += 1;
      },
      denied: ({ path }) => tokenDenials.inc({ procedure: path }),
    },
  };
}
