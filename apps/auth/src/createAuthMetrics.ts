import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RelayTokenObserver } from '@streamgate/server';

export type AuthMetrics = {
  registry: Registry;
  tokenRequests: Counter<'procedure'>;
  tokensIssued: Counter<'procedure'>;
  tokenDenials: Counter<'procedure'>;
  httpDuration: Histogram<'route' | 'method' | 'status'>;
  demandRegistrations: Counter<'outcome'>;
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
  return {
    registry,
    demandRegistrations,
    tokenRequests,
    tokensIssued,
    tokenDenials,
    httpDuration,
    observer: {
      requested: ({ path }) => tokenRequests.inc({ procedure: path }),
      issued: ({ path }) => tokensIssued.inc({ procedure: path }),
      denied: ({ path }) => tokenDenials.inc({ procedure: path }),
    },
  };
}
