import { describe, expect, it } from 'vitest';
import { credentialFromFragment } from './credentialFromFragment.js';

describe('credentialFromFragment', () => {
  it('reads #credential=…, decoded, and nothing else', () => {
    expect(credentialFromFragment('#credential=s3cr%2Bt')).toBe('s3cr+t');
    expect(credentialFromFragment('#other=1&credential=abc')).toBe('abc');
    expect(credentialFromFragment('')).toBeUndefined();
    expect(credentialFromFragment('#credential=')).toBeUndefined();
    expect(credentialFromFragment('#nothing')).toBeUndefined();
  });
});
