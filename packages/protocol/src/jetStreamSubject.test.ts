import { describe, expect, it } from 'vitest';
import { jetStreamLiveSubject, jetStreamRepublish, jetStreamSubject, streamOfJetStreamSubject } from './jetStreamSubject.js';

describe('jetStreamSubject', () => {
  it('maps every name to one subject token and back', () => {
    for (const name of ['task:42', 'a.b.c', '.lead', 'trail.', 'a..b', '{user}.x/y-z_1', 'x'.repeat(200)]) {
      const subject = jetStreamSubject('STREAMGATE', name);
      expect(subject.startsWith('STREAMGATE.')).toBe(true);
      expect(subject.slice('STREAMGATE.'.length)).not.toMatch(/[.*> \t]/);
      expect(streamOfJetStreamSubject('STREAMGATE', subject)).toBe(name);
    }
    expect(jetStreamSubject('T', 'orders.42')).toBe('T.orders%2E42');
  });

  it('finds no stream in another stream’s subject, a deeper one, or a token no name encodes to', () => {
    expect(streamOfJetStreamSubject('T', 'U.x')).toBeNull();
    expect(streamOfJetStreamSubject('T', 'T.x.y')).toBeNull();
    expect(streamOfJetStreamSubject('T', 'T.')).toBeNull();
    expect(streamOfJetStreamSubject('T', 'T.a%b')).toBeNull();
    expect(streamOfJetStreamSubject('T', 'T.a b')).toBeNull();
  });
});

describe('jetStreamLiveSubject', () => {
  it('is the republish destination of the stream’s subject', () => {
    const { src, dest } = jetStreamRepublish('T');
    expect(src).toBe('T.>');
    expect(jetStreamLiveSubject('T', 'orders.42')).toBe(`${dest.slice(0, -1)}${jetStreamSubject('T', 'orders.42').slice(2)}`);
    expect(jetStreamLiveSubject('T', 'orders.42')).toBe('$SG.live.T.orders%2E42');
  });
});
