// @vitest-environment jsdom
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { act, cleanup, renderHook } from '@testing-library/react';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpLink } from '@trpc/client';
import { createTRPCReact } from '@trpc/react-query';
import { initTRPC } from '@trpc/server';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { ReactNode } from 'react';
import { RelayClient } from '@streamgate/client';
import type { RelaySubscription } from '@streamgate/protocol';
import { scriptedFixtures, tokenFor, waitForValue } from '@streamgate/testkit/client';
import { RelayProvider } from './RelayProvider.js';
import { useSubscriptionRelay } from './useSubscriptionRelay.js';
import { useSubscriptionRelay as useTanstackSubscriptionRelay } from './useTanstackSubscriptionRelay.js';

type Tick = { n: number };
const exp = () => Math.floor(Date.now() / 1000) + 600;

// A real tRPC server over HTTP: the hook's requests go through each integration's own links.
let calls: string[] = [];
const t = initTRPC.create();
const router = t.router({
  token: t.procedure
    .input((raw: unknown) => raw as { id: string })
    .query(({ input }): RelaySubscription<Tick> => {
      calls.push(input.id);
      return tokenFor<Tick>(`ticks:${input.id}`, `jwt-${calls.length}`);
    }),
});
const server = createServer(createHTTPHandler({ router }));
let url = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const fixtures = scriptedFixtures(RelayClient);
afterEach(() => cleanup());

const classic = createTRPCReact<typeof router>();
const tanstack = createTRPCContext<typeof router>();

async function setup() {
  calls = [];
  const { r, c: relay } = await fixtures.setup();
  // A default staleTime that would serve a cached (and, later, expired) token: the hook must not.
  const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 60_000 } } });
  const links = [httpLink({ url })];
  const classicClient = classic.createClient({ links });
  const wrapper = ({ children }: { children?: ReactNode }) => (
    <QueryClientProvider client={queryClient}>
      <classic.Provider client={classicClient} queryClient={queryClient}>
        <tanstack.TRPCProvider trpcClient={createTRPCClient<typeof router>({ links })} queryClient={queryClient}>
          <RelayProvider client={relay}>{children}</RelayProvider>
        </tanstack.TRPCProvider>
      </classic.Provider>
    </QueryClientProvider>
  );
  return { r, wrapper };
}

const afterRender =
  <T,>(probe: () => T) =>
  async (): Promise<T> => {
    await act(() => new Promise<void>((resolve) => setTimeout(resolve, 5)));
    return probe();
  };
const inAct = { intervalMs: 0 };

describe.each([
  {
    name: 'classic @trpc/react-query',
    useHook: (id: string, onData: (data: Tick) => void) =>
      useSubscriptionRelay({ useQuery: classic.token, input: { id }, onSubscriptionData: onData }),
  },
  {
    name: '@trpc/tanstack-react-query',
    useHook: (id: string, onData: (data: Tick) => void) =>
      useTanstackSubscriptionRelay({ queryOptions: tanstack.useTRPC().token, input: { id }, onSubscriptionData: onData }),
  },
])('useSubscriptionRelay with $name', ({ useHook }) => {
  it('fetches its token over HTTP, delivers events, and fetches a fresh token for a new input', async () => {
    const { r, wrapper } = await setup();
    const seen: number[] = [];
    const { result, rerender } = renderHook(({ id }: { id: string }) => useHook(id, (data) => seen.push(data.n)), {
      wrapper,
      initialProps: { id: 'a' },
    });
    const first = await waitForValue(
      'subscribe a',
      afterRender(() => r.frames('subscribe')[0]),
      inAct,
    );
    expect(first.token).toBe('jwt-1');
    r.send(0, { op: 'subscribed', sid: first.sid, stream: 'ticks:a', recovery: 'fresh', position: '1-0', exp: exp() });
    r.send(0, { op: 'event', stream: 'ticks:a', id: '2-0', data: { n: 2 } });
    await waitForValue(
      'event',
      afterRender(() => result.current.position === '2-0'),
      inAct,
    );
    expect(seen).toEqual([2]);

    rerender({ id: 'b' });
    const second = await waitForValue(
      'subscribe b',
      afterRender(() => r.frames('subscribe')[1]),
      inAct,
    );
    expect(second.token).toBe('jwt-2');
    rerender({ id: 'a' });
    const third = await waitForValue(
      'subscribe a again',
      afterRender(() => r.frames('subscribe')[2]),
      inAct,
    );
    // Not the cached jwt-1: a token is fetched anew each time the relay asks for one.
    expect(third.token).toBe('jwt-3');
    expect(calls).toEqual(['a', 'b', 'a']);
  });
});
