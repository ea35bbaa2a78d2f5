import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';
import type { VenueFeed } from './VenueFeed.js';
import type { VenueFeedEvents } from './VenueFeedOptions.js';
import type { SymbolWriterEvents } from './SymbolWriter.js';
import type { VenueKind } from './venueSchemas.js';

const KINDS: VenueKind[] = ['snapshot', 'quote', 'tick'];

/** Venue metrics: coverage is read from the feeds at scrape time, so it is never a stale copy. */
export class VenueMetrics {
  private readonly attempts: Counter;
  private readonly skipped: Counter;
  private readonly stale: Counter;
  private readonly payloads: Counter;
  private readonly garbage: Counter;
  private readonly dropped: Counter;
  private readonly restarts: Counter;
  private readonly noticeFailures: Counter;
  private readonly notices: Counter;
  private readonly feeds = new Map<string, () => VenueFeed | undefined>();

  constructor(registry: Registry) {
    const registers = [registry];
    this.attempts = new Counter({
      name: 'ingest_venue_reconciles_total',
      help: 'HTTP reconcile attempts by kind (diff, replay, reassert) and outcome',
      labelNames: ['venue', 'kind', 'outcome'],
      registers,
    });
    this.skipped = new Counter({
      name: 'ingest_venue_reassert_skipped_total',
      help: 'Re-assert ticks skipped because the session’s previous attempt was still running',
      labelNames: ['venue'],
      registers,
    });
    this.stale = new Counter({
      name: 'ingest_venue_stale_answers_total',
      help: 'Answers dropped because their attempt had been concluded or replaced',
      labelNames: ['venue'],
      registers,
    });
    this.payloads = new Counter({
      name: 'ingest_venue_payloads_total',
      help: 'Payloads received, by kind and whether the symbol is wanted',
      labelNames: ['venue', 'kind', 'wanted'],
      registers,
    });
    this.garbage = new Counter({
      name: 'ingest_venue_garbage_total',
      help: 'MQTT payloads refused by the schema',
      labelNames: ['venue'],
      registers,
    });
    this.dropped = new Counter({
      name: 'ingest_venue_dropped_total',
      help: 'Payloads dropped oldest-first while Redis refused writes',
      labelNames: ['venue'],
      registers,
    });
    this.restarts = new Counter({
      name: 'ingest_venue_sequence_restarts_total',
      help: 'A symbol kind whose venue sequence started again from a lower number (a venue restart)',
      labelNames: ['venue', 'kind'],
      registers,
    });
    this.noticeFailures = new Counter({
      name: 'ingest_venue_notice_write_failures_total',
      help: 'Notices the control stream did not take',
      labelNames: ['venue'],
      registers,
    });
    this.notices = new Counter({
      name: 'ingest_venue_notices_total',
      help: 'Notices emitted, by type',
      labelNames: ['venue', 'type'],
      registers,
    });
    const feeds = this.feeds;
    new Gauge({
      name: 'ingest_venue_coverage',
      help: 'Wanted symbols with a payload within the staleness window, by kind (kind="any" is the union)',
      labelNames: ['venue', 'kind'],
      registers,
      collect() {
        for (const [venue, get] of feeds) {
          const snapshot = get()?.coverageSnapshot();
          for (const kind of KINDS) this.set({ venue, kind }, snapshot?.byKind[kind].size ?? 0);
          this.set({ venue, kind: 'any' }, snapshot?.covered.size ?? 0);
        }
      },
    });
    new Gauge({
      name: 'ingest_venue_wanted',
      help: 'Symbols wanted from the venue on this worker',
      labelNames: ['venue'],
      registers,
      collect() {
        for (const [venue, get] of feeds) this.set({ venue }, get()?.wantedSymbols().length ?? 0);
      },
    });
  }

  watch(venue: string, feed: () => VenueFeed | undefined): void {
    this.feeds.set(venue, feed);
  }

  notice(venue: string, type: string): void {
    this.notices.inc({ venue, type });
  }

  feedEvents(venue: string): VenueFeedEvents {
    return {
      attempt: (kind, outcome) => this.attempts.inc({ venue, kind, outcome }),
      reassertSkipped: () => this.skipped.inc({ venue }),
      staleAnswer: () => this.stale.inc({ venue }),
      payload: (kind, wanted) => this.payloads.inc({ venue, kind, wanted: String(wanted) }),
      garbage: () => this.garbage.inc({ venue }),
    };
  }

  writerEvents(venue: string): SymbolWriterEvents & { noticeWriteFailed(): void } {
    return {
      dropped: (count: number) => this.dropped.inc({ venue }, count),
      sequenceRestart: (_stream, restart) => this.restarts.inc({ venue, kind: restart.kind }),
      noticeWriteFailed: () => this.noticeFailures.inc({ venue }),
    };
  }
}
