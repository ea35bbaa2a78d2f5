import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** What a request asked for: a closed set, so a scanner's paths never become label values. */
export type DashboardRoute = 'page' | 'asset' | 'config' | 'healthz' | 'readyz' | 'metrics' | 'other';

/** Where serving failed: a request's handler threw (500), or a file read broke off mid-response. */
export type DashboardFailure = 'request' | 'file_read';

/** The dashboard server's Prometheus metrics, on a registry of its own (tests run servers side by side). */
export class DashboardMetrics {
  readonly registry = new Registry();
  readonly #requests = new Counter({
    name: 'streamgate_dashboard_http_requests_total',
    help: 'HTTP requests answered, by route and status',
    labelNames: ['route', 'status'] as const,
    registers: [this.registry],
  });
  readonly #failures = new Counter({
    name: 'streamgate_dashboard_failures_total',
    help: 'Requests that failed in the server (also logged): a handler that threw, a file read that broke off',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  readonly #pageReady = new Gauge({
    name: 'streamgate_dashboard_page_ready',
    help: '1 while the page directory holds index.html (what /readyz answers), else 0',
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry });
    // Both kinds from the start, so a rate over them exists before the first failure.
    for (const kind of ['request', 'file_read'] as const) this.#failures.inc({ kind }, 0);
  }

  answered(route: DashboardRoute, status: number): void {
    this.#requests.inc({ route, status: String(status) });
  }

  failed(kind: DashboardFailure): void {
    this.#failures.inc({ kind });
  }

  /** The exposition, with the page's readiness as of now. */
  async render(pageReady: boolean): Promise<string> {
    this.#pageReady.set(pageReady ? 1 : 0);
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
