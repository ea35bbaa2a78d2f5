import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import { publishSequence } from './support/publishSequence.js';
import { rawText } from './support/rawSocket.js';

const getFleet = useFleet({ relays: 1 });

/** A bare socket that counts event seqs for one subscription and checks their order as they come. */
class SeqSocket {
  readonly seqs: number[] = [];
  live = false;
  problem: string | null = null;
  private readonly ws: WebSocket;

  constructor(url: string) {
    this.ws = new WebSocket(url);
    this.ws.on('message', (raw) => {
      const frame = JSON.parse(rawText(raw)) as { op: string; data?: { seq: number }; code?: string };
      if (frame.op === 'event' && frame.data !== undefined) this.seqs.push(frame.data.seq);
      else if (frame.op === 'live') this.live = true;
      else if (frame.op === 'error') this.problem = `error frame ${frame.code}`;
    });
  }

  opened(): Promise<void> {
    return withDeadline(new Promise<void>((resolve) => this.ws.once('open', () => resolve())), 10_000, 'socket did not open');
  }

  subscribe(token: string, from?: string): void {
    this.ws.send(JSON.stringify({ op: 'subscribe', sid: 's', token, ...(from === undefined ? {} : { from }) }));
  }

  close(): void {
    this.ws.close();
  }
}

describe('catch-up', () => {
  it('merges concurrent catch-ups of one stream and joins each client live at the seam while publishing goes on', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0];
    if (relay === undefined) throw new Error('no relay');
    const stream = 'catch-up-merge';
    const redis = fleet.redis.client();
    const history = 10_000;
    const ids = await publishSequence(redis, stream, 0, history, 500);

    const clients = 100;
    const tokens = await Promise.all(Array.from({ length: clients }, (_, i) => fleet.trpc.demo.token.query({ stream, user: `r${i}` })));
    const sockets = Array.from({ length: clients }, () => new SeqSocket(relay.url));
    await Promise.all(sockets.map((s) => s.opened()));
    const pagesBefore = metricValue(await relay.metrics(), 'streamgate_relay_catchup_pages_total');

    // Half resume from the very start, half from scattered points; publishing keeps going.
    const starts = sockets.map((_, i) => (i % 2 === 0 ? -1 : (i * 97) % history));
    const publishing = publishSequence(redis, stream, history, history + 2_000, 20);
    sockets.forEach((s, i) => {
      const start = starts[i] ?? -1;
      s.subscribe(tokens[i]?.token ?? '', start < 0 ? '0-0' : ids[start]);
    });
    await publishing;
    const total = history + 2_000;
    try {
      await waitFor(() => sockets.every((s, i) => s.seqs.length >= total - ((starts[i] ?? -1) + 1) || s.problem !== null), {
        timeoutMs: 60_000,
        message: 'not every resumed client caught up',
      });
      sockets.forEach((s, i) => {
        const first = (starts[i] ?? -1) + 1;
        expect(s.problem).toBeNull();
        expect(s.live).toBe(true);
        expect(s.seqs.length).toBe(total - first);
        const wrong = s.seqs.findIndex((seq, k) => seq !== first + k);
        expect(wrong, `client ${i} at position ${wrong}`).toBe(-1);
      });
      // Unmerged, each client would page through its own history: ~20 pages of 500 apiece, 2,000
      // in all. Merged, one walk serves them (measured: 24 pages).
      const pages = metricValue(await relay.metrics(), 'streamgate_relay_catchup_pages_total') - pagesBefore;
      expect(pages).toBeLessThan(200);
    } finally {
      for (const s of sockets) s.close();
    }
  });
});
