import { describe, expect, it } from 'vitest';
import { demandFeeds } from './demandFeeds.js';
import type { SubscribedStreams } from './demandFeeds.js';

const hub = (...streams: string[]): SubscribedStreams => ({ streamsWithSubscribers: () => [...streams] });
const read = (feeds: Map<string, () => string[]>, target: string): string[] | undefined => feeds.get(target)?.().sort();

describe('demandFeeds', () => {
  it("adds every JetStream target's streams to the demand target's heartbeat, once each, and to no other", () => {
    const feeds = demandFeeds(
      new Map([
        ['redis://a:6379/0', hub('evm:a', 'evm:both')],
        ['redis://b:6379/0', hub('evm:b')],
      ]),
      new Map([
        ['nats://n1:4222/TASKS', hub('evm:j1', 'evm:both')],
        ['nats://n1:4222/OTHER', hub('evm:j2')],
      ]),
      'redis://a:6379/0',
    );
    expect([...feeds.keys()]).toEqual(['redis://a:6379/0', 'redis://b:6379/0']);
    expect(read(feeds, 'redis://a:6379/0')).toEqual(['evm:a', 'evm:both', 'evm:j1', 'evm:j2']);
    expect(read(feeds, 'redis://b:6379/0')).toEqual(['evm:b']);
  });

  it('reads the hubs at each call, not once', () => {
    const streams: string[] = [];
    const feeds = demandFeeds(
      new Map([['redis://a:6379/0', hub()]]),
      new Map([['nats://n:4222/J', { streamsWithSubscribers: () => [...streams] }]]),
      'redis://a:6379/0',
    );
    expect(read(feeds, 'redis://a:6379/0')).toEqual([]);
    streams.push('evm:late');
    expect(read(feeds, 'redis://a:6379/0')).toEqual(['evm:late']);
  });

  it('needs no demand target without JetStream hubs, and refuses JetStream hubs without an allowlisted one', () => {
    expect(read(demandFeeds(new Map([['redis://a:6379/0', hub('x')]]), new Map(), undefined), 'redis://a:6379/0')).toEqual(['x']);
    const jetStream = new Map([['nats://n:4222/J', hub('y')]]);
    expect(() => demandFeeds(new Map([['redis://a:6379/0', hub()]]), jetStream, undefined)).toThrow(/RELAY_JETSTREAM_DEMAND_TARGET=unset/);
    expect(() => demandFeeds(new Map([['redis://a:6379/0', hub()]]), jetStream, 'redis://c:6379/0')).toThrow(
      /RELAY_JETSTREAM_DEMAND_TARGET=redis:\/\/c:6379\/0/,
    );
  });
});
