import { OPS_SNAPSHOT_INTERVAL_MS, OPS_SNAPSHOT_MAX_BYTES, opsSnapshotSchema } from './opsSnapshot.js';
import type { OpsSnapshot } from './opsSnapshot.js';

/** Where snapshots go: the app's Redis edge, `XADD <stream> MAXLEN ~ <n> * data <json>`. */
export type OpsSnapshotSink = (json: string) => Promise<void>;

export type OpsPublishFailure =
  | { readonly code: 'collect_failed'; readonly retryable: true; readonly message: string }
  | { readonly code: 'invalid_snapshot'; readonly retryable: false; readonly message: string }
  | { readonly code: 'too_large'; readonly retryable: false; readonly bytes: number }
  | { readonly code: 'sink_failed'; readonly retryable: true; readonly message: string };

export interface OpsSnapshotPublisherOptions {
  /** Builds the snapshot numbered `seq` (0, 1, 2 … in this process). */
  readonly collect: (seq: number) => OpsSnapshot;
  readonly sink: OpsSnapshotSink;
  /** Told of each failure once; the app logs and counts it. */
  readonly onFailure: (failure: OpsPublishFailure) => void;
  readonly intervalMs?: number;
  readonly maxBytes?: number;
}

/**
 * Publishes one snapshot per interval. A publish still in flight when the next is due is not
 * overlapped: a slow Redis gets one snapshot at a time, and the skipped ones are simply not
 * taken (a snapshot is a whole picture, the next one replaces it).
 */
export class OpsSnapshotPublisher {
  readonly #options: OpsSnapshotPublisherOptions;
  #timer: ReturnType<typeof setInterval> | null = null;
  #inFlight: Promise<void> | null = null;
  #seq = 0;

  constructor(options: OpsSnapshotPublisherOptions) {
    this.#options = options;
  }

  start(): void {
    if (this.#timer !== null) return;
    this.#timer = setInterval(() => void this.publishOnce(), this.#options.intervalMs ?? OPS_SNAPSHOT_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Stops the loop and waits for a publish in flight. */
  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#inFlight;
  }

  /** One snapshot now (the loop calls this; tests and a final publish on shutdown may too). */
  publishOnce(): Promise<void> {
    if (this.#inFlight !== null) return this.#inFlight;
    const run = this.#publish().finally(() => {
      this.#inFlight = null;
    });
    this.#inFlight = run;
    return run;
  }

  async #publish(): Promise<void> {
    let snapshot: OpsSnapshot;
    try {
      snapshot = this.#options.collect(this.#seq++);
    } catch (error) {
      // The loop runs from a timer: a throw here would be an unhandled rejection that ends the app.
      this.#options.onFailure({ code: 'collect_failed', retryable: true, message: error instanceof Error ? error.message : String(error) });
      return;
    }
    const parsed = opsSnapshotSchema.safeParse(snapshot);
    if (!parsed.success) {
      this.#options.onFailure({ code: 'invalid_snapshot', retryable: false, message: parsed.error.message });
      return;
    }
    const json = JSON.stringify(parsed.data);
    const bytes = new TextEncoder().encode(json).length;
    if (bytes > (this.#options.maxBytes ?? OPS_SNAPSHOT_MAX_BYTES)) {
      this.#options.onFailure({ code: 'too_large', retryable: false, bytes });
      return;
    }
    try {
      await this.#options.sink(json);
    } catch (error) {
      this.#options.onFailure({ code: 'sink_failed', retryable: true, message: error instanceof Error ? error.message : String(error) });
    }
  }
}
