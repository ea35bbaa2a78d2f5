import { describe, expect, it } from 'vitest';
import { SequenceEpochs } from './SequenceEpochs.js';
import type { VenuePayload } from './venueSchemas.js';

const tick = (seq: number, ts: number): VenuePayload => ({ kind: 'tick', symbol: 'AAA', seq, ts, price: 1, size: 1 });
const quote = (seq: number, ts: number): VenuePayload => ({ kind: 'quote', symbol: 'AAA', seq, ts, bid: 1, ask: 2 });

describe('SequenceEpochs', () => {
  it('keeps the venue ids while one numbering lasts, replays included', () => {
    const epochs = new SequenceEpochs(new Map());
    const ids = [tick(1, 100), tick(2, 200), tick(2, 200), tick(1, 100), tick(3, 300)].map((p) => epochs.next(p).write.dedupeId);
    expect(ids).toEqual(['tick:1', 'tick:2', 'tick:2', 'tick:1', 'tick:3']);
  });

  it('starts a new epoch when the sequence falls while time goes on (a venue restart), per kind', () => {
    const epochs = new SequenceEpochs(new Map());
    epochs.next(tick(500, 1_000));
    epochs.next(quote(40, 1_000));
    const restarted = epochs.next(tick(1, 2_000));
    expect(restarted.restart).toEqual({ kind: 'tick', fromSeq: 500, toSeq: 1, epoch: 1 });
    expect(restarted.write.dedupeId).toBe('tick:1@1');
    expect(epochs.next(tick(2, 2_100)).write.dedupeId).toBe('tick:2@1');
    // The same print over a second session, and a late print of the old numbering.
    expect(epochs.next(tick(2, 2_100)).write.dedupeId).toBe('tick:2@1');
    expect(epochs.next(tick(500, 1_000)).write.dedupeId).toBe('tick:500');
    expect(epochs.next(quote(41, 2_200)).write.dedupeId).toBe('quote:41');
  });

  it('continues the numbering an earlier owner recorded in the stream state', () => {
    const first = new SequenceEpochs(new Map());
    first.next(tick(500, 1_000));
    const { write } = first.next(tick(1, 2_000));
    const taker = new SequenceEpochs(new Map([[write.stateKey, write.stateValue]]));
    expect(taker.next(tick(2, 2_100)).write.dedupeId).toBe('tick:2@1');
    expect(taker.next(tick(1, 2_000)).write.dedupeId).toBe('tick:1@1');
    expect(taker.next(tick(1, 3_000)).restart).toMatchObject({ fromSeq: 2, toSeq: 1, epoch: 2 });
  });

  it('ignores state it cannot read', () => {
    const epochs = new SequenceEpochs(new Map([['seq:tick', 'garbage']]));
    expect(epochs.next(tick(1, 100)).write.dedupeId).toBe('tick:1');
  });
});
