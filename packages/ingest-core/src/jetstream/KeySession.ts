import { jetStreamId } from '@streamgate/protocol';
import type { IngestError } from '../IngestError.js';
import type { Fence } from '../StreamWriter.js';
import type { IngestTarget } from './IngestTarget.js';
import type { IngestStateLog, RecordMeta } from './IngestStateLog.js';
import { natsIngestError } from './natsIngestError.js';
import type { StepEntry } from './stateRecords.js';

/** Times one entry may find the subject moved before the step gives up for now. */
const MAX_CONFLICTS = 5;

export type Published = { ok: true; written: number; duplicates: number; ids: (string | null)[] } | { ok: false; error: IngestError };

export function fencedError(key: string, token: number, newer: number): { ok: false; error: IngestError } {
  return {
    ok: false,
    error: {
      code: 'fenced',
      retryable: false,
      message:
        `token ${token} is stale for ${key}: its state log was written by token ${newer} ` +
        `(if no worker holds that token, the lease store lost its fencing counter: raise it above ${newer})`,
    },
  };
}

/** Where an owner's view of a key starts (JetStreamStreamWriter's claim). */
export interface SessionStart {
  readonly subject: string;
  readonly lastRecord: number;
  readonly base: number;
  readonly records: number;
  readonly state: Map<string, string>;
  readonly last: number;
}

/**
 * One owner's view of one key, from its claim on: where its state log and its subject end as far
 * as it knows, and the ids others stored there. Its calls assume nobody else writes unless
 * JetStream says so; after any failure the writer drops the session and claims again.
 */
export class KeySession {
  readonly subject: string;
  /** The state log's last sequence: what the next append expects. */
  #lastRecord: number;
  /** First sequence of the snapshot in force. */
  #base: number;
  /** Step records since that snapshot. */
  #records: number;
  readonly #state: Map<string, string>;
  /** The data subject's last sequence: what the next publish expects. */
  #last: number;
  /** Nats-Msg-Ids found stored after this owner's starting point, by whoever stored them. */
  private readonly written = new Set<string>();

  constructor(
    private readonly target: IngestTarget,
    readonly fence: Fence,
    start: SessionStart,
  ) {
    this.subject = start.subject;
    this.#lastRecord = start.lastRecord;
    this.#base = start.base;
    this.#records = start.records;
    this.#state = new Map(start.state);
    this.#last = start.last;
  }

  get token(): number {
    return this.fence.token;
  }

  /** The data subject's last sequence as this owner knows it. */
  get last(): number {
    return this.#last;
  }

  /** Step records appended since the snapshot in force. */
  get records(): number {
    return this.#records;
  }

  /** The adapter state as of this owner's last committed step. */
  get state(): ReadonlyMap<string, string> {
    return this.#state;
  }

  /** The claim record (appended by the writer, which retries a lost race itself) landed at `lastRecord`. */
  claimed(lastRecord: number): void {
    this.#lastRecord = lastRecord;
    this.#records += 1;
  }

  /** A step's record is stored: its state changes are in force. */
  stepCommitted(set: Readonly<Record<string, string>> | undefined, del: readonly string[] | undefined): void {
    for (const [field, value] of Object.entries(set ?? {})) this.#state.set(field, value);
    for (const field of del ?? []) this.#state.delete(field);
    this.#records += 1;
  }

  /** A snapshot starting at `first` is stored: records before it are no longer read. */
  snapshotTaken(first: number): void {
    this.#base = first;
    this.#records = 0;
  }

  /** Appends one record after the last this owner knows: `fenced` if a newer owner appended since. */
  async append(
    kind: RecordMeta['kind'],
    body: Parameters<IngestStateLog['append']>[2],
  ): Promise<{ ok: true; first: number } | { ok: false; error: IngestError }> {
    const { key, token } = this.fence;
    try {
      const answer = await this.target.log.append(key, { token, kind, base: this.#base }, body, this.#lastRecord);
      if (answer.ok) {
        this.#lastRecord = answer.last;
        return { ok: true, first: answer.first };
      }
      const newer = await this.target.log.lastToken(key);
      if (newer > token) return fencedError(key, token, newer);
      return {
        ok: false,
        error: {
          code: 'jetstream_unavailable',
          retryable: true,
          message: `the state log of ${key} moved under token ${token} (an earlier append's answer was lost, or another owner holds the same token); it is read again before the next write`,
        },
      };
    } catch (error) {
      return { ok: false, error: natsIngestError(error, `appending to the state log of ${key}`) };
    }
  }

  /** Publishes `entries` in order, each unless its id is found stored. */
  async publish(entries: readonly StepEntry[]): Promise<Published> {
    const ids: (string | null)[] = [];
    let written = 0;
    for (const [msgId, data] of entries) {
      const one = await this.publishOne(msgId, data);
      if (!one.ok) return one;
      ids.push(one.id);
      if (one.id !== null) written += 1;
    }
    return { ok: true, written, duplicates: entries.length - written, ids };
  }

  /** Learns the ids stored on the subject after `after`, and its last sequence. */
  async catchUp(after: number): Promise<void> {
    const found = await this.target.data.idsAfter(this.subject, after);
    for (const id of found.ids) this.written.add(id);
    this.#last = found.last;
  }

  private async publishOne(msgId: string, data: string): Promise<{ ok: true; id: string | null } | { ok: false; error: IngestError }> {
    const { key, token } = this.fence;
    for (let conflicts = 0; conflicts <= MAX_CONFLICTS; conflicts += 1) {
      if (this.written.has(msgId)) return { ok: true, id: null };
      try {
        const answer = await this.target.data.publish(this.subject, data, msgId, this.#last);
        if (answer.kind === 'stored') {
          this.#last = answer.seq;
          return { ok: true, id: jetStreamId(answer.seq) };
        }
        if (answer.kind === 'duplicate') return { ok: true, id: null };
        // Someone stored a message since: learn what, and whether a newer owner is writing.
        await this.catchUp(this.#last);
        const newer = await this.target.log.lastToken(key);
        if (newer > token) return fencedError(key, token, newer);
      } catch (error) {
        return { ok: false, error: natsIngestError(error, `publishing ${msgId} to ${this.subject}`) };
      }
    }
    return {
      ok: false,
      error: {
        code: 'jetstream_unavailable',
        retryable: true,
        message: `${this.subject} changed under token ${token} ${MAX_CONFLICTS + 1} times while publishing ${msgId}; is something else writing to it?`,
      },
    };
  }
}
