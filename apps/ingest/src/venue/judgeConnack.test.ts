import { describe, expect, it } from 'vitest';
import { judgeConnack } from './judgeConnack.js';

describe('judgeConnack', () => {
  it.each([
    // Not about the key and not clearing by itself: redialled, with one session_refused.
    [1, 'refused', false],
    [2, 'refused', false],
    // Clears by itself (an overloaded venue; a session of the key closing): redialled quietly.
    [3, 'refused', true],
    [5, 'refused', true],
    // The venue does not accept the key: final for the key.
    [4, 'key_refused', false],
    // Undefined by MQTT 3.1.1: redialled, reported like 1 and 2.
    [6, 'refused', false],
    [128, 'refused', false],
  ])('return code %i is %s, retryable %s', (returnCode, code, retryable) => {
    expect(judgeConnack(returnCode)).toMatchObject({ code, retryable, returnCode });
  });

  it('names the code, never anything the client sent', () => {
    expect(judgeConnack(4).message).toBe('CONNACK refused: bad user name or password (the app key)');
    expect(judgeConnack(42).message).toBe('CONNACK refused: return code 42');
  });
});
