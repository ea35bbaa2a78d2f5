import { describe, expect, it } from 'vitest';
import { STREAM, tokenFor } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { WebSocket } from 'ws';
import { RelayClient } from './RelayClient.js';
import type { RelayClientOptions } from './RelayClient.js';
import type { SubscribeOptions } from './types.js';

// Options from plain JavaScript, which the static types do not reach.
const make = (options: unknown) => () => new RelayClient(options as RelayClientOptions);
const base = { urls: ['ws://127.0.0.1:1/v1/ws'], WebSocket };

describe('RelayClient options', () => {
  it.each([
    [undefined, /RelayClient options: must be an object/],
    [{}, /RelayClient options: urls is required/],
    [{ ...base, urls: 'ws://127.0.0.1:1/v1/ws' }, /urls must be an array of relay URLs/],
    [{ ...base, urls: [42] }, /urls\.0 must be a string/],
    [{ ...base, logger: {} }, /logger\.debug is required/],
    [{ ...base, logger: { warn() {}, error() {} } }, /logger\.debug is required/],
    [{ ...base, logger: { debug: 1, warn() {}, error() {} } }, /logger\.debug must be a function/],
    [{ ...base, requestTimeoutMs: 0 }, /requestTimeoutMs must be more than 0/],
    [{ ...base, requestTimeoutMs: Number.NaN }, /requestTimeoutMs must be a finite number of milliseconds/],
    [{ ...base, livenessGraceMs: -40_000 }, /livenessGraceMs must be 0 or more/],
    [{ ...base, livenessGraceMs: 'x' }, /livenessGraceMs must be a finite number of milliseconds/],
    [{ ...base, healthyAfterMs: -1 }, /healthyAfterMs must be 0 or more/],
    [{ ...base, backoff: { baseMs: '100' } }, /backoff\.baseMs must be a finite number of milliseconds/],
    [{ ...base, onError: 'log' }, /onError must be a function/],
    [{ ...base, clock: { now: () => 0 } }, /clock\.after is required/],
  ])('refuses %j with a TypeError naming the option', (options, message) => {
    expect(make(options)).toThrow(TypeError);
    expect(make(options)).toThrow(message);
  });

  it('keeps the documented RangeError for backoff bounds; an infinite ceiling is no number of milliseconds', () => {
    expect(make({ ...base, backoff: { baseMs: 0 } })).toThrow(RangeError);
    expect(make({ ...base, backoff: { baseMs: 500, maxMs: 100 } })).toThrow(RangeError);
    expect(make({ ...base, backoff: { maxMs: Number.POSITIVE_INFINITY } })).toThrow(
      /backoff\.maxMs must be a finite number of milliseconds/,
    );
  });

  it('takes every documented option', () => {
    const logger = { debug() {}, warn() {}, error() {} };
    const client = new RelayClient({
      ...base,
      logger,
      backoff: { baseMs: 10, maxMs: 100 },
      healthyAfterMs: 0,
      livenessGraceMs: 0,
      requestTimeoutMs: 1,
    });
    client.close();
  });
});

describe('subscribe options', () => {
  const subscribe = (options: unknown) => () => {
    const client = new RelayClient(base);
    try {
      client.subscribe(options as SubscribeOptions<Tick>);
    } finally {
      client.close();
    }
  };
  const getToken = () => Promise.resolve(tokenFor<Tick>(STREAM));

  it.each([
    [undefined, /subscribe options: must be an object/],
    [{ onEvent() {} }, /subscribe options: getToken is required/],
    [{ getToken }, /subscribe options: onEvent is required/],
    [{ getToken, onEvent() {}, from: '1-' }, /subscribe options: from /],
    [{ getToken, onEvent() {}, onReset: true }, /onReset must be a function/],
  ])('refuses %j with a TypeError naming the option', (options, message) => {
    expect(subscribe(options)).toThrow(TypeError);
    expect(subscribe(options)).toThrow(message);
  });
});
