import { describe, expect, it } from 'vitest';
import { DEFAULT_JETSTREAM_STREAM, isJetStreamTarget, normalizeJetStreamTarget, parseJetStreamTarget } from './jetStreamTarget.js';

describe('parseJetStreamTarget', () => {
  it('reads seeds, ports and the JetStream stream', () => {
    expect(parseJetStreamTarget('nats://N1.example:4223,n2.example/TASKS')).toEqual({
      kind: 'jetstream',
      tls: false,
      servers: ['n1.example:4223', 'n2.example:4222'],
      stream: 'TASKS',
    });
    expect(parseJetStreamTarget('tls://10.0.0.1')).toEqual({
      kind: 'jetstream',
      tls: true,
      servers: ['10.0.0.1:4222'],
      stream: DEFAULT_JETSTREAM_STREAM,
    });
    expect(parseJetStreamTarget('nats://[::1]:4222/')?.servers).toEqual(['[::1]:4222']);
    expect(parseJetStreamTarget('nats://a:1,a:1,b:2')?.servers).toEqual(['a:1', 'b:2']);
  });

  it.each([
    ['credentials', 'nats://user:secret@n1:4222'],
    ['a token', 'nats://token@n1'],
    ['another scheme', 'redis://n1:6379/0'],
    ['no host', 'nats://'],
    ['an empty seed', 'nats://n1,,n2'],
    ['port 0', 'nats://n1:0'],
    ['a port too large', 'nats://n1:65536'],
    ['a port with a leading zero', 'nats://n1:04222'],
    ['a stream with a dot', 'nats://n1/TASKS.x'],
    ['a wildcard stream', 'nats://n1/*'],
    ['a deeper path', 'nats://n1/TASKS/x'],
    ['a query', 'nats://n1?x=1'],
    ['a fragment', 'nats://n1#x'],
  ])('refuses %s', (_, raw) => {
    expect(parseJetStreamTarget(raw)).toBeNull();
    expect(normalizeJetStreamTarget(raw)).toBeNull();
  });
});

describe('normalizeJetStreamTarget', () => {
  it('names every port and the stream, so one target has one spelling', () => {
    expect(normalizeJetStreamTarget('nats://N1')).toBe('nats://n1:4222/STREAMGATE');
    expect(normalizeJetStreamTarget('nats://n1:4222/STREAMGATE')).toBe('nats://n1:4222/STREAMGATE');
    expect(normalizeJetStreamTarget('tls://n1:7422,n2:7422/T')).toBe('tls://n1:7422,n2:7422/T');
  });

  it('tells a JetStream target from a Redis one by its scheme', () => {
    expect(isJetStreamTarget('nats://n1')).toBe(true);
    expect(isJetStreamTarget('tls://n1')).toBe(true);
    expect(isJetStreamTarget('redis://n1:6379/0')).toBe(false);
  });
});
