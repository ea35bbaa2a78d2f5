import { describe, expect, it } from 'vitest';
import { readModeReply } from './readModeReply.js';

describe('readModeReply', () => {
  it('allows notifications only with keyspace events of the stream class (t, or A)', () => {
    const mode = (flags: string) => readModeReply(['notify-keyspace-events', flags]);
    expect(['tK', 'KA', 'AKE', 'Kt$']).toEqual(['tK', 'KA', 'AKE', 'Kt$'].filter((f) => mode(f) === 'notify'));
    expect(['', 'Et', 'K$', 'Ex', 'E']).toEqual(['', 'Et', 'K$', 'Ex', 'E'].filter((f) => mode(f) === 'batch'));
    expect(readModeReply(null)).toBe('batch');
  });
});
