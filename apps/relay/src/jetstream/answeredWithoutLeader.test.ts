import { describe, expect, it } from 'vitest';
import type { StreamInfo } from '@nats-io/jetstream';
import { answeredWithoutLeader } from './answeredWithoutLeader.js';

const info = (replicas: number, cluster: StreamInfo['cluster']): StreamInfo =>
  ({ config: { num_replicas: replicas }, cluster }) as unknown as StreamInfo;

describe('answeredWithoutLeader', () => {
  it('is a replicated stream’s answer that names no leader', () => {
    expect(answeredWithoutLeader(info(3, { name: 'c' }))).toBe(true);
    expect(answeredWithoutLeader(info(3, { name: 'c', leader: '' }))).toBe(true);
    expect(answeredWithoutLeader(info(3, { name: 'c', leader: 'n2' }))).toBe(false);
  });

  it('is never a single replica’s, nor a standalone server’s, which has no cluster at all', () => {
    expect(answeredWithoutLeader(info(1, { name: 'c' }))).toBe(false);
    expect(answeredWithoutLeader(info(1, undefined))).toBe(false);
  });
});
