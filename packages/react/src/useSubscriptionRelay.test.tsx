// @vitest-environment jsdom
import { act, cleanup, renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { RelayClient } from '@streamgate/client';
import type { EventMeta } from '@streamgate/client';
import type { ReactNode } from 'react';
// The client package's scripted relay peer: a real WebSocket server speaking the protocol.
import { recordingLogger, ScriptedRelay, tokenFor } from '../../client/src/testing/scriptedRelay.js';
import { RelayProvider } from './RelayProvider.js';
import { useSubscriptionRelay } from './useSubscriptionRelay.js';

type Tick = { n: number };
const exp = () => Math.floor(Date.now() / 1000) + 600;
const procedure = { query: (input: { id: string }) => Promise.resolve(tokenFor<Tick>(`ticks:${input.id}`)) };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  cleanup();
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

async function setup() {
  const r = await ScriptedRelay.start();
  const client = new RelayClient({ urls: [r.url], WebSocket, logger: recordingLogger(), backoff: { baseMs: 10, maxMs: 50 } });
  cleanups.push(() => r.close(), () => client.close());
  const wrapper = ({ children }: { children?: ReactNode }) => <RelayProvider client={client}>{children}</RelayProvider>;
  return { r, wrapper };
}

/**
 * Polls `probe` against a deadline; each poll runs inside `act`, so the state updates that socket
 * callbacks queued are rendered before the probe reads `result.current`.
 */
async function until<T>(what: string, probe: () => T | undefined | false, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await act(() => new Promise<void>((resolve) => setTimeout(resolve, 5)));
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
  }
}

describe('useSubscriptionRelay', () => {
  it('delivers events, tracks state and position, and does not resubscribe on re-render', async () => {
    const { r, wrapper } = await setup();
    const seen: Array<[string, number, EventMeta]> = [];
    const { result, rerender, unmount } = renderHook(
      ({ label }: { label: string }) =>
        useSubscriptionRelay({
          query: procedure,
          // A new object each render with the same content: must not resubscribe.
          input: { id: 'a' },
          onSubscriptionData: (data, meta) => seen.push([label, data.n, meta]),
        }),
      { wrapper, initialProps: { label: 'first' } },
    );
    expect(result.current.state).toBe('connecting');
    const { sid } = await until('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: 'ticks:a', recovery: 'fresh', position: '1-0', exp: exp() });
    await until('live', () => result.current.state === 'live');

    rerender({ label: 'second' });
    r.send(0, { op: 'event', stream: 'ticks:a', id: '2-0', data: { n: 2 } });
    await until('position', () => result.current.position === '2-0');
    expect(seen).toEqual([['second', 2, { id: '2-0', stream: 'ticks:a' }]]);
    expect(r.frames('subscribe')).toHaveLength(1);

    unmount();
    await until('unsubscribe on unmount', () => r.frames('unsubscribe')[0]);
  });

  it('resubscribes when the input changes and goes idle when disabled', async () => {
    const { r, wrapper } = await setup();
    const { result, rerender } = renderHook(
      ({ id, enabled }: { id: string; enabled: boolean }) =>
        useSubscriptionRelay({ query: procedure, input: { id }, enabled, onSubscriptionData: () => undefined }),
      { wrapper, initialProps: { id: 'a', enabled: true } },
    );
    const first = await until('subscribe a', () => r.frames('subscribe')[0]);
    rerender({ id: 'b', enabled: true });
    const second = await until('subscribe b', () => r.frames('subscribe')[1]);
    expect(second.token).toBe(first.token);
    expect(r.frames('unsubscribe')).toEqual([{ op: 'unsubscribe', sid: first.sid }]);

    rerender({ id: 'b', enabled: false });
    expect(result.current.state).toBe('idle');
    await until('unsubscribe b', () => r.frames('unsubscribe')[1]);
  });

  it('calls onReset when the stream is recreated and delivers the new incarnation', async () => {
    const { r, wrapper } = await setup();
    const log: string[] = [];
    const { result } = renderHook(
      () =>
        useSubscriptionRelay({
          query: procedure,
          input: { id: 'a' },
          onSubscriptionData: (data, meta) => log.push(`${data.n}@${meta.id}`),
          onReset: (info) => log.push(`reset ${info.previousPosition ?? '-'}→${info.position}`),
        }),
      { wrapper },
    );
    const { sid } = await until('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: 'ticks:a', recovery: 'fresh', position: '1-0', exp: exp() });
    r.send(0, { op: 'event', stream: 'ticks:a', id: '8-0', data: { n: 8 } });
    await until('the old incarnation', () => result.current.position === '8-0');
    r.send(0, { op: 'stream_reset', stream: 'ticks:a', position: '0-0' });
    r.send(0, { op: 'event', stream: 'ticks:a', id: '1-1', data: { n: 1 } });
    await until('the new incarnation', () => result.current.position === '1-1');
    expect(log).toEqual(['8@8-0', 'reset 8-0→0-0', '1@1-1']);
  });

  it('surfaces a closing error', async () => {
    const { r, wrapper } = await setup();
    const { result } = renderHook(
      () => useSubscriptionRelay({ query: procedure, input: { id: 'a' }, onSubscriptionData: () => undefined }),
      { wrapper },
    );
    const { sid } = await until('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'error', sid, code: 'token_signature_invalid', retryable: false, message: 'bad signature' });
    await until('closed', () => result.current.state === 'closed');
    expect(result.current.error).toEqual({ code: 'token_signature_invalid', retryable: false, message: 'bad signature' });
  });
});
