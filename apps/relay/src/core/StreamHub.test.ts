import { describe, expect, it } from 'vitest';
import { compareStreamIds } from '@streamgate/protocol';
import type { StreamId } from '@streamgate/protocol';
import type { Connection, TopicPublisher } from './Connection.js';
import { StreamHub } from './StreamHub.js';
import { noHubMetrics } from './HubMetrics.js';
import type { EntriesListener, SourceResult, StreamEntry, StreamInfo, StreamSource } from './StreamSource.js';

// The core is tested through its own interfaces: an in-memory stream store whose live reader
// runs only when the test says so, and connections that record frames. Cross-process tests in
// test/ cover the same paths over Redis and real sockets; this one controls the interleavings.

class MemorySource implements StreamSource {
  readonly entries: StreamEntry[] = [];
  readonly watched = new Map<string, StreamId>();
  rangeCalls = 0;
  healthy = true;
  listener: EntriesListener = () => undefined;

  append(n: number): void {
    for (let i = 0; i < n; i++) {
      const seq = this.entries.length + 1;
      this.entries.push({ id: `${seq}-0`, fields: ['data', JSON.stringify({ seq })] });
    }
  }

  /** What a live reader would do: hand over everything after each watched cursor. */
  read(): void {
    for (const [stream, cursor] of this.watched) {
      const fresh = this.entries.filter((e) => compareStreamIds(e.id, cursor) > 0);
      const last = fresh[fresh.length - 1];
      if (last === undefined) continue;
      this.watched.set(stream, last.id);
      this.listener(stream, fresh);
    }
  }

  inspect(_stream: string, probe?: StreamId): Promise<SourceResult<{ info: StreamInfo | null; probeExists: boolean }>> {
    const last = this.entries[this.entries.length - 1];
    const info: StreamInfo | null =
      last === undefined
        ? null
        : { lastGeneratedId: last.id, firstEntryId: this.entries[0]?.id ?? null, length: this.entries.length, entriesAdded: this.entries.length, maxDeletedEntryId: '0-0' };
    return Promise.resolve({ ok: true, value: { info, probeExists: this.entries.some((e) => e.id === probe) } });
  }

  range(_stream: string, after: StreamId, count: number): Promise<SourceResult<StreamEntry[]>> {
    this.rangeCalls++;
    return Promise.resolve({ ok: true, value: this.entries.filter((e) => compareStreamIds(e.id, after) > 0).slice(0, count) });
  }

  watch(stream: string, after: StreamId): void {
    this.watched.set(stream, after);
  }
  unwatch(stream: string): void {
    this.watched.delete(stream);
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

class Recorder implements Connection {
  readonly frames: Array<{ op: string; id?: string; data?: { seq: number }; recovery?: string }> = [];
  readonly topics = new Set<string>();
  closed = false;
  send(frame: string): boolean {
    this.frames.push(JSON.parse(frame) as Recorder['frames'][number]);
    return true;
  }
  subscribe(topic: string): void {
    this.topics.add(topic);
  }
  unsubscribe(topic: string): void {
    this.topics.delete(topic);
  }
  bufferedAmount(): number {
    return 0;
  }
  cork(fn: () => void): void {
    fn();
  }
  close(): void {
    this.closed = true;
  }
  seqs(): number[] {
    return this.frames.filter((f) => f.op === 'event').map((f) => f.data?.seq ?? -1);
  }
  ops(): string[] {
    return this.frames.map((f) => f.op);
  }
}

function setup(pageSize = 3) {
  const source = new MemorySource();
  const conns: Recorder[] = [];
  const publisher: TopicPublisher = {
    publish: (topic, frame) => conns.filter((c) => c.topics.has(topic)).forEach((c) => c.send(frame)),
    subscriberCount: (topic) => conns.filter((c) => c.topics.has(topic)).length,
  };
  const hub = new StreamHub({ source, publisher, metrics: noHubMetrics, topicPrefix: 't|', catchUpPageSize: pageSize, maxBufferedBytes: 1 << 20, lingerMs: 0 });
  source.listener = hub.onEntries;
  const connect = (): Recorder => {
    const c = new Recorder();
    conns.push(c);
    return c;
  };
  return { source, hub, connect };
}

describe('StreamHub', () => {
  it('starts a fresh subscriber live at the pod cursor', async () => {
    const { source, hub, connect } = setup();
    source.append(5);
    const c = connect();
    expect(await hub.subscribe(c, 's', 'st', undefined, 0).started).toEqual({ ok: true });
    source.append(2);
    source.read();
    expect(c.ops()).toEqual(['subscribed', 'live', 'event', 'event']);
    expect(c.seqs()).toEqual([6, 7]);
  });

  it('catches up in pages and joins live with no gap and no duplicate at the seam', async () => {
    const { source, hub, connect } = setup(3);
    source.append(10);
    const watcher = connect();
    await hub.subscribe(watcher, 'w', 'st', undefined, 0).started;
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', '2-0', 0);
    // Entries arrive and are published while the catch-up pages are being read.
    source.append(4);
    source.read();
    await sub.started;
    await untilSettled(() => c.ops().includes('live'));
    source.append(3);
    source.read();
    expect(c.seqs()).toEqual(Array.from({ length: 15 }, (_, i) => i + 3));
    expect(c.frames[0]).toMatchObject({ op: 'subscribed', recovery: 'recovered' });
  });

  it('holds a client that is ahead of the pod cursor until the reader reaches its position', async () => {
    const { source, hub, connect } = setup();
    source.append(3);
    const first = connect();
    await hub.subscribe(first, 'a', 'st', undefined, 0).started;
    // Entries 4–8 exist in storage but this pod's reader has not delivered them yet.
    source.append(5);
    const ahead = connect();
    await hub.subscribe(ahead, 'b', 'st', '6-0', 0).started;
    expect(ahead.ops()).toEqual(['subscribed']);
    source.read();
    expect(ahead.seqs()).toEqual([7, 8]);
    expect(first.seqs()).toEqual([4, 5, 6, 7, 8]);
    expect(ahead.ops()).toEqual(['subscribed', 'live', 'event', 'event']);
  });

  it('releases a waiting client as soon as the cursor reaches it, even with nothing after it', async () => {
    const { source, hub, connect } = setup();
    source.append(2);
    await hub.subscribe(connect(), 'a', 'st', undefined, 0).started;
    source.append(2);
    const ahead = connect();
    await hub.subscribe(ahead, 'b', 'st', '4-0', 0).started;
    source.read();
    expect(ahead.ops()).toEqual(['subscribed', 'live']);
  });

  it('serves concurrent catch-ups of one stream with one walk', async () => {
    const { source, hub, connect } = setup(5);
    source.append(50);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0).started;
    const clients = Array.from({ length: 20 }, () => connect());
    const subs = clients.map((c, i) => hub.subscribe(c, 's', 'st', `${i + 1}-0`, 0));
    await Promise.all(subs.map((s) => s.started));
    await untilSettled(() => clients.every((c) => c.ops().includes('live')));
    clients.forEach((c, i) => expect(c.seqs()).toEqual(Array.from({ length: 50 - (i + 1) }, (_, k) => i + 2 + k)));
    // One walk of 50 entries in pages of 5 (plus the final short read), not 20 walks.
    expect(source.rangeCalls).toBeLessThanOrEqual(12);
  });

  it('sends nothing to a subscriber removed while its start is pending', async () => {
    const { source, hub, connect } = setup();
    source.append(5);
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', '1-0', 0);
    hub.unsubscribe(sub);
    const result = await sub.started;
    expect(result.ok).toBe(false);
    source.append(1);
    source.read();
    expect(c.frames).toEqual([]);
  });
});

/** Waits for microtask-driven progress (catch-up pages) without timers; fails after a bound. */
async function untilSettled(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (condition()) return;
    await Promise.resolve();
  }
  throw new Error('condition not reached after 1,000 microtask turns');
}
