import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { combineObservers, createDemandObserver } from './createDemandObserver.js';

describe('createDemandObserver', () => {
  it('registers demand only for streams under its prefixes, and reports failures without throwing', async () => {
    const registered: string[] = [];
    const outcomes: string[] = [];
    const observer = createDemandObserver({
      prefixes: ['evm:', 'venue:'],
      ttlMs: 5_000,
      register: (stream) =>
        stream.endsWith('bad') ? Promise.reject(new Error('redis down')) : (registered.push(stream), Promise.resolve()),
      onOutcome: (outcome, stream) => outcomes.push(`${outcome} ${stream}`),
    });
    const issued = (stream: string): void => observer.issued?.({ path: 'token', stream, subject: 'alice' });
    issued('evm:1:heads');
    issued('demo:ticks');
    issued('venue:bad');
    await waitFor(() => outcomes.length === 2, { timeoutMs: 2_000, message: 'outcomes never reported' });
    expect(registered).toEqual(['evm:1:heads']);
    expect(outcomes.sort()).toEqual(['failed venue:bad', 'registered evm:1:heads']);
  });

  it('combines observers so each one hears every event', () => {
    const heard: string[] = [];
    const a = { issued: () => void heard.push('a') };
    const b = { issued: () => void heard.push('b'), denied: () => void heard.push('b-denied') };
    const both = combineObservers(a, b);
    both.issued?.({ path: 'p', stream: 's', subject: 'x' });
    both.denied?.({ path: 'p', reason: 'no' });
    expect(heard).toEqual(['a', 'b', 'b-denied']);
  });
});
