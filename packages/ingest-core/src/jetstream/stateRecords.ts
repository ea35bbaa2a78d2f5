import { z } from 'zod';

/**
 * The records of one key's state log (a subject of `<STREAM>_INGEST`, see JetStreamStreamWriter)
 * and how they fold into the key's state. A record is JSON, split into parts (consecutive
 * messages) when it is larger than one message may be; it counts once its last part is stored.
 *
 * - `step`: one write step. `seq` is the data subject's last sequence when the step began;
 *   `entries` ([Nats-Msg-Id, data] pairs) are published to the data subject after the record is
 *   stored; `set` and `del` change the state (sets first, as the Redis writer does). A claim is a
 *   step with nothing in it.
 * - `snapshot`: the whole state; records before it are no longer read (and are purged).
 */
export const HEADER = {
  token: 'Streamgate-Ingest-Token',
  kind: 'Streamgate-Ingest-Kind',
  /** `i/k`: part i of k. */
  part: 'Streamgate-Ingest-Part',
  /** First sequence of the snapshot in force when the record was written; 0: none yet. */
  base: 'Streamgate-Ingest-Base',
} as const;

export type RecordKind = 'step' | 'snapshot';

const stepBody = z.strictObject({
  seq: z.number().int().nonnegative(),
  set: z.record(z.string(), z.string()).optional(),
  del: z.array(z.string()).optional(),
  entries: z.array(z.tuple([z.string(), z.string()])).optional(),
});
const snapshotBody = z.strictObject({ seq: z.number().int().nonnegative(), state: z.record(z.string(), z.string()) });

export type StepBody = z.output<typeof stepBody>;
export type StepEntry = [msgId: string, data: string];

/** One stored message of a state subject, as read back. */
export interface LogMessage {
  readonly seq: number;
  readonly header: (name: string) => string | undefined;
  readonly data: Uint8Array;
}

/** What a record's parts carry besides their bytes. */
export interface PartHeaders {
  readonly token: number;
  readonly kind: RecordKind;
  readonly base: number;
  readonly part: string;
}

/** A key's state as its log says, and what a writer needs to go on appending to it. */
export interface FoldedLog {
  readonly state: Map<string, string>;
  /** Sequence of the log's last message (0: the log is empty): what the next append expects. */
  readonly lastSeq: number;
  /** Token of the log's last message: the newest owner that wrote (tokens never decrease along a log). */
  readonly lastToken: number;
  /** First sequence of the snapshot in force (0: none). */
  readonly base: number;
  /** Complete records since the snapshot in force (or since the log's start). */
  readonly records: number;
  /** The newest step that carried entries: its entries may not all be published yet. */
  readonly lastEntries: { readonly seq: number; readonly entries: readonly StepEntry[] } | null;
}

/** A log with nothing in it (a new Map each time: callers own the state they are given). */
export function emptyLog(): FoldedLog {
  return { state: new Map(), lastSeq: 0, lastToken: 0, base: 0, records: 0, lastEntries: null };
}

/** Thrown for a message on a state subject that no ingest writer wrote: nothing should be written over it. */
export class ForeignRecordError extends Error {
  override readonly name = 'ForeignRecordError';
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The record's bytes in parts of at most `partBytes`. */
export function recordParts(body: StepBody | z.output<typeof snapshotBody>, partBytes: number): Uint8Array[] {
  if (!Number.isInteger(partBytes) || partBytes < 1) throw new RangeError(`partBytes must be a positive integer, got ${partBytes}`);
  const bytes = encoder.encode(JSON.stringify(body));
  const parts: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += partBytes) parts.push(bytes.subarray(at, at + partBytes));
  return parts.length === 0 ? [bytes] : parts;
}

function headersOf(message: LogMessage): PartHeaders & { index: number; count: number } {
  const token = Number(message.header(HEADER.token));
  const kind = message.header(HEADER.kind);
  const base = Number(message.header(HEADER.base));
  const part = message.header(HEADER.part) ?? '';
  const [index, count] = part.split('/').map(Number);
  if (
    !Number.isSafeInteger(token) ||
    token < 0 ||
    (kind !== 'step' && kind !== 'snapshot') ||
    !Number.isSafeInteger(base) ||
    base < 0 ||
    index === undefined ||
    count === undefined ||
    !Number.isSafeInteger(index) ||
    !Number.isSafeInteger(count) ||
    index < 1 ||
    index > count
  ) {
    throw new ForeignRecordError(`message ${message.seq} carries no ingest record headers`);
  }
  return { token, kind, base, part, index, count };
}

/** The token of a state subject's message (its last one says who wrote last). */
export function tokenOf(message: LogMessage): number {
  return headersOf(message).token;
}

/** The base a reader starts folding from, given the log's last message. */
export function baseOf(message: LogMessage): number {
  return headersOf(message).base;
}

function joined(chunks: readonly Uint8Array[]): string {
  const size = chunks.reduce((n, c) => n + c.length, 0);
  const all = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    all.set(chunk, at);
    at += chunk.length;
  }
  return decoder.decode(all);
}

function parsed<T>(schema: z.ZodType<T>, text: string, seq: number): T {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ForeignRecordError(`the record ending at ${seq} is not JSON`);
  }
  const result = schema.safeParse(json);
  if (!result.success)
    throw new ForeignRecordError(`the record ending at ${seq} is not an ingest record: ${result.error.issues[0]?.message}`);
  return result.data;
}

/**
 * Folds a log's messages, oldest first, from its snapshot in force (or its start) to its end.
 * Parts of one record are consecutive; a record whose parts stop short (its writer died, or was
 * fenced, between two parts) never counted and is skipped.
 */
export function foldLog(messages: readonly LogMessage[], from: FoldedLog = emptyLog()): FoldedLog {
  let { state, base, records, lastEntries, lastSeq, lastToken } = from;
  state = new Map(state);
  let pending: { kind: RecordKind; token: number; count: number; next: number; first: number; chunks: Uint8Array[] } | null = null;
  for (const message of messages) {
    const h = headersOf(message);
    lastSeq = message.seq;
    lastToken = h.token;
    if (h.index === 1) pending = { kind: h.kind, token: h.token, count: h.count, next: 1, first: message.seq, chunks: [] };
    if (pending === null || pending.next !== h.index || pending.count !== h.count || pending.token !== h.token || pending.kind !== h.kind) {
      pending = null;
      continue;
    }
    pending.chunks.push(message.data);
    pending.next += 1;
    if (pending.next <= pending.count) continue;
    const text = joined(pending.chunks);
    if (pending.kind === 'snapshot') {
      const body = parsed(snapshotBody, text, message.seq);
      state = new Map(Object.entries(body.state));
      base = pending.first;
      records = 0;
      lastEntries = null;
    } else {
      const body = parsed(stepBody, text, message.seq);
      for (const [field, value] of Object.entries(body.set ?? {})) state.set(field, value);
      for (const field of body.del ?? []) state.delete(field);
      if (body.entries !== undefined && body.entries.length > 0) lastEntries = { seq: body.seq, entries: body.entries };
      records += 1;
    }
    pending = null;
  }
  return { state, lastSeq, lastToken, base, records, lastEntries };
}

export { snapshotBody, stepBody };
