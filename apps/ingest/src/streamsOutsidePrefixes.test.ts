import { expect, it } from 'vitest';
import { streamsOutsidePrefixes } from './streamsOutsidePrefixes.js';

it('names the streams no demand prefix covers, sorted', () => {
  const streams = ['evm:eth:heads', 'chain:eth:heads', 'md.sim.AAPL', 'mdx.sim.AAPL', 'eth:logs'];
  expect(streamsOutsidePrefixes(streams, ['evm:', 'md.'])).toEqual(['chain:eth:heads', 'eth:logs', 'mdx.sim.AAPL']);
  expect(streamsOutsidePrefixes(streams, ['evm:', 'md.', 'chain:', 'e', 'mdx'])).toEqual([]);
});
