import { errorText } from './PublishError.js';
import type { PublishError } from './PublishError.js';
import type { JetStreamTargetWriter, JetStreamTargetWriterOptions } from './JetStreamTargetWriter.js';

export type JetStreamWriterLoad = { ok: true; writer: JetStreamTargetWriter } | { ok: false; error: PublishError };

/** What every JetStream target of a publisher shares: all of JetStreamTargetWriterOptions but the target. */
export type JetStreamTargetSettings = Omit<JetStreamTargetWriterOptions, 'target'>;

/**
 * A publisher's writers for its JetStream targets, one per target, each made on the first publish
 * to a stream placed there. The NATS client is imported then, by a dynamic import: a publisher that
 * only ever writes to Redis never loads it, and neither does a process that never publishes.
 */
export class JetStreamTargetWriters {
  private readonly loads = new Map<string, Promise<JetStreamWriterLoad>>();
  private readonly settings: JetStreamTargetSettings;
  private closed = false;

  constructor(settings: JetStreamTargetSettings) {
    this.settings = settings;
  }

  /** The writer for a normalized JetStream target; shared by every publish to it. */
  writerFor(target: string): Promise<JetStreamWriterLoad> {
    if (this.closed) {
      return Promise.resolve({
        ok: false,
        error: { code: 'closed', retryable: false, written: 'no', message: 'publisher.close() was called' },
      });
    }
    let load = this.loads.get(target);
    if (load === undefined) {
      load = this.load(target);
      this.loads.set(target, load);
    }
    return load;
  }

  private async load(target: string): Promise<JetStreamWriterLoad> {
    try {
      const { openJetStreamTargetWriter } = await import('./jetstream/openJetStreamTargetWriter.js');
      return { ok: true, writer: openJetStreamTargetWriter({ ...this.settings, target }) };
    } catch (error) {
      // An installation without the NATS client (a bundle that left it out): each publish there
      // says so, and the next one tries again rather than keeping the failure for ever.
      this.loads.delete(target);
      return {
        ok: false,
        error: {
          code: 'redis_unavailable',
          retryable: true,
          written: 'no',
          message: `could not load the NATS client for ${target}: ${errorText(error)}; nothing was sent`,
        },
      };
    }
  }

  /** Closes every writer made, after the loads under way (a publish waiting for one then answers `closed`). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const loaded = await Promise.all(this.loads.values());
    await Promise.all(loaded.map((load) => (load.ok ? load.writer.close() : Promise.resolve())));
  }
}
