import type { VenueKind, VenuePayload } from './venueSchemas.js';

/** Where one kind of one symbol stands: its numbering (epoch) and the last payload of it. */
interface KindPosition {
  readonly epoch: number;
  readonly seq: number;
  readonly ts: number;
  /** The `ts` of the epoch's first payload: anything older belongs to the epoch before. */
  readonly since: number;
}

/** One payload's write: its dedupe id, and the state that records it (written with the entry). */
export interface SequencedPayload {
  readonly payload: VenuePayload;
  readonly dedupeId: string;
  readonly stateKey: string;
  readonly stateValue: string;
}

/** A venue whose numbering restarted: what the worker reports (log, metric, notice). */
export interface SequenceRestart {
  readonly kind: VenueKind;
  /** The last sequence number of the old numbering, and the first of the new one. */
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly epoch: number;
}

const STATE_PREFIX = 'seq:';

/**
 * Invariant: a payload's dedupe id names it within its venue numbering, so a print that arrives
 * twice (two sessions, two owners) lands once, and a print of a new numbering never collides with
 * one of the old. The dedupe id is the venue's `<kind>:<seq>`; a venue that restarts numbers from
 * 1 again, and those ids were already used within the dedupe TTL (an hour), so every print after
 * a restart was dropped as a duplicate, silently. A restart is a payload whose `seq` is below the
 * last one's while its `ts` is later: within one numbering the sequence grows with time, and a
 * replayed print carries its own, older `ts` (the same `seq` again is a resend, whatever its
 * `ts`). From then on its ids carry the epoch (`<kind>:<seq>@<epoch>`; epoch 0 keeps the plain
 * form), kept in the stream's state, written with each entry so that an owner taking over
 * continues the same numbering.
 */
export class SequenceEpochs {
  private readonly positions = new Map<VenueKind, KindPosition>();

  constructor(state: ReadonlyMap<string, string>) {
    for (const [key, value] of state) {
      if (!key.startsWith(STATE_PREFIX)) continue;
      const position = parsePosition(value);
      if (position !== undefined) this.positions.set(key.slice(STATE_PREFIX.length) as VenueKind, position);
    }
  }

  /** The payload's write, and the restart it shows, if it is the first of a new numbering. */
  next(payload: VenuePayload): { write: SequencedPayload; restart?: SequenceRestart } {
    const { kind, seq, ts } = payload;
    const at = this.positions.get(kind);
    let position: KindPosition;
    let epoch: number;
    let restart: SequenceRestart | undefined;
    if (at === undefined) {
      position = { epoch: 0, seq, ts, since: ts };
      epoch = 0;
    } else if (seq < at.seq && ts > at.ts) {
      position = { epoch: at.epoch + 1, seq, ts, since: ts };
      epoch = position.epoch;
      restart = { kind, fromSeq: at.seq, toSeq: seq, epoch };
    } else if (ts < at.since && at.epoch > 0) {
      // A late print of the numbering before the restart (another session still delivering it).
      position = at;
      epoch = at.epoch - 1;
    } else {
      position = seq > at.seq ? { ...at, seq, ts: Math.max(ts, at.ts) } : at;
      epoch = at.epoch;
    }
    this.positions.set(kind, position);
    const write: SequencedPayload = {
      payload,
      dedupeId: epoch === 0 ? `${kind}:${seq}` : `${kind}:${seq}@${epoch}`,
      stateKey: STATE_PREFIX + kind,
      stateValue: `${position.epoch} ${position.seq} ${position.ts} ${position.since}`,
    };
    return restart === undefined ? { write } : { write, restart };
  }
}

function parsePosition(text: string): KindPosition | undefined {
  const parts = text.split(' ').map(Number);
  if (parts.length !== 4 || !parts.every((n) => Number.isSafeInteger(n) && n >= 0)) return undefined;
  const [epoch = 0, seq = 0, ts = 0, since = 0] = parts;
  return { epoch, seq, ts, since };
}
