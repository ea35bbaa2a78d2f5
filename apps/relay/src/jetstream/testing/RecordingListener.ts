import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId, StreamName } from '@streamgate/protocol';
import type { SourceError, SourceListener, StreamEntry } from '../../core/StreamSource.js';

export type Heard = { kind: 'entry'; entry: StreamEntry } | { kind: 'reset' } | { kind: 'failed'; error: SourceError };

/** A SourceListener that keeps what each stream was told, in order, and checks the seam's promises as it goes. */
export class RecordingListener implements SourceListener {
  private readonly heard = new Map<StreamName, Heard[]>();
  /** Entries at or below the stream's last delivered id (since its last reset): each is a broken promise. */
  readonly violations: string[] = [];
  private readonly last = new Map<StreamName, StreamId>();

  entries(stream: StreamName, entries: readonly StreamEntry[]): void {
    for (const entry of entries) {
      const last = this.last.get(stream);
      if (last !== undefined && compareStreamIds(entry.id, last) <= 0) this.violations.push(`${stream}: ${entry.id} after ${last}`);
      this.last.set(stream, entry.id);
      this.of(stream).push({ kind: 'entry', entry });
    }
  }

  reset(stream: StreamName): void {
    this.last.delete(stream);
    this.of(stream).push({ kind: 'reset' });
  }

  failed(stream: StreamName, error: SourceError): void {
    this.of(stream).push({ kind: 'failed', error });
  }

  /** Everything `stream` heard, in order. */
  events(stream: StreamName): readonly Heard[] {
    return this.of(stream);
  }

  /** The ids `stream` was delivered, in order (resets left out). */
  ids(stream: StreamName): StreamId[] {
    return this.of(stream).flatMap((h) => (h.kind === 'entry' ? [h.entry.id] : []));
  }

  /** `stream`'s events as short text: ids, and `reset`. */
  trace(stream: StreamName): string[] {
    return this.of(stream).map((h) => (h.kind === 'entry' ? h.entry.id : h.kind));
  }

  private of(stream: StreamName): Heard[] {
    let list = this.heard.get(stream);
    if (list === undefined) this.heard.set(stream, (list = []));
    return list;
  }
}
