// @vitest-environment jsdom
import { act, cleanup, renderHook } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { RelayClient } from '@streamgate/client';
import type { EventMeta } from '@streamgate/client';
import type { ReactNode } from 'react';
// A scripted relay peer: a real WebSocket server speaking the protocol.
import { scriptedFixtures, tokenFor, waitForValue } from '@streamgate/testkit/client';
import { RelayProvider } from './RelayProvider.js';
import { useSubscriptionRelay } from './useSubscriptionRelay.js';

type Tick = { n: number };
const exp = () => Math.floor(Date.now() / 1000) + 600;
const procedure = { query: (input: { id: string }) => Promise.resolve(tokenFor<Tick>(`ticks:${input.id}`)) };

const fixtures = scriptedFixtures(RelayClient);
// Registered after the fixtures' own hook, so it runs first: components unmount before their client closes.
afterEach(() => cleanup());

async function setup() {
  const { r, c: client } = await fixtures.setup();
  const wrapper = ({ children }: { children?: ReactNode }) => <RelayProvider client={client}>{children}</RelayProvider>;
  return { r, wrapper };
}

/**
 * For `waitForValue` on hook results: each check first lets socket callbacks run inside `act`,
 * and with `inAct` no time passes outside it, so the state updates those callbacks queue are
 * rendered before `probe` reads `result.current`.
 */
const afterRender =
  <T,>(probe: () => T) =>
  async (): Promise<T> => {
    await act(() => new Promise<void>((resolve) => setTimeout(resolve, 5)));
    return probe();
  };
const inAct = { intervalMs: 0 };

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
    const { sid } = await waitForValue(
      'subscribe',
      afterRender(() => r.frames('subscribe')[0]),
      inAct,
    );
    r.send(0, { op: 'subscribed', sid, stream: 'ticks:a', recovery: 'fresh', position: '1-0', exp: exp() });
    await waitForValue(
      'live',
      afterRender(() => result.current.state === 'live'),
      inAct,
    );

    rerender({ label: 'second' });
    r.send(0, { op: 'event', stream: 'ticks:a', id: '2-0', data: { n: 2 } });
    await waitForValue(
      'position',
      afterRender(() => result.current.position === '2-0'),
      inAct,
    );
    expect(seen).toEqual([['second', 2, { id: '2-0', stream: 'ticks:a' }]]);
    expect(r.frames('subscribe')).toHaveLength(1);

    unmount();
    await waitForValue(
      'unsubscribe on unmount',
      afterRender(() => r.frames('unsubscribe')[0]),
      inAct,
    );
  });

  it('renders connecting from the first render when enabled, idle only when disabled', async () => {
    const { wrapper } = await setup();
    const rendered: string[][] = [[], []];
    renderHook(
      () => {
        const on = useSubscriptionRelay({ query: procedure, input: { id: 'on' }, onSubscriptionData: () => undefined });
        const off = useSubscriptionRelay({ query: procedure, input: { id: 'off' }, enabled: false, onSubscriptionData: () => undefined });
        rendered[0]?.push(on.state);
        rendered[1]?.push(off.state);
      },
      { wrapper },
    );
    expect(rendered[0]?.[0]).toBe('connecting');
    expect(new Set(rendered[1])).toEqual(new Set(['idle']));
  });

  it('resubscribes when the input changes and goes idle when disabled', async () => {
    const { r, wrapper } = await setup();
    const { result, rerender } = renderHook(
      ({ id, enabled }: { id: string; enabled: boolean }) =>
        useSubscriptionRelay({ query: procedure, input: { id }, enabled, onSubscriptionData: () => undefined }),
      { wrapper, initialProps: { id: 'a', enabled: true } },
    );
    const first = await waitForValue(
      'subscribe a',
      afterRender(() => r.frames('subscribe')[0]),
      inAct,
    );
    rerender({ id: 'b', enabled: true });
    const second = await waitForValue(
      'subscribe b',
      afterRender(() => r.frames('subscribe')[1]),
      inAct,
    );
    expect(second.token).toBe(first.token);
    expect(r.frames('unsubscribe')).toEqual([{ op: 'unsubscribe', sid: first.sid }]);

    rerender({ id: 'b', enabled: false });
    expect(result.current.state).toBe('idle');
    await waitForValue(
      'unsubscribe b',
      afterRender(() => r.frames('unsubscribe')[1]),
      inAct,
    );
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
    const { sid } = await waitForValue(
      'subscribe',
      afterRender(() => r.frames('subscribe')[0]),
      inAct,
    );
    r.send(0, { op: 'subscribed', sid, stream: 'ticks:a', recovery: 'fresh', position: '1-0', exp: exp() });
    r.send(0, { op: 'event', stream: 'ticks:a', id: '8-0', data: { n: 8 } });
    await waitForValue(
      'the old incarnation',
      afterRender(() => result.current.position === '8-0'),
      inAct,
    );
    r.send(0, { op: 'stream_reset', stream: 'ticks:a', position: '0-0' });
    r.send(0, { op: 'event', stream: 'ticks:a', id: '1-1', data: { n: 1 } });
    await waitForValue(
      'the new incarnation',
      afterRender(() => result.current.position === '1-1'),
      inAct,
    );
    expect(log).toEqual(['8@8-0', 'reset 8-0→0-0', '1@1-1']);
  });

  it('surfaces a closing error', async () => {
    const { r, wrapper } = await setup();
    const { result } = renderHook(
      () => useSubscriptionRelay({ query: procedure, input: { id: 'a' }, onSubscriptionData: () => undefined }),
      { wrapper },
    );
    const { sid } = await waitForValue(
      'subscribe',
      afterRender(() => r.frames('subscribe')[0]),
      inAct,
    );
    r.send(0, { op: 'error', sid, code: 'token_signature_invalid', retryable: false, message: 'bad signature' });
    await waitForValue(
      'closed',
      afterRender(() => result.current.state === 'closed'),
      inAct,
    );
    expect(result.current.error).toEqual({ code: 'token_signature_invalid', retryable: false, message: 'bad signature' });
  });
});
