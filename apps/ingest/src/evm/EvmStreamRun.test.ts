import { describe, expect, it } from 'vitest';
import type { RunContext } from '@streamgate/ingest-core';
import { MemoryStreamWriter } from '@streamgate/ingest-core/testing';
import { ManualClock } from '@streamgate/protocol/testing';
import { ingestEventSchema } from '@streamgate/ingest-events';
import { chainSchema, streamSpecSchema } from '../config.js';
import type { EvmRunEvents, FailoverState } from './evmEvents.js';
import { EvmStreamRun } from './EvmStreamRun.js';
import { FakeChain } from './testing/FakeChain.js';
import { FakeProviders } from './testing/FakeProviders.js';
import { FakeSockets } from './testing/FakeSockets.js';

/** Every hook call, by name, for assertions on what an operator would see in logs and metrics. */
function recordingEvents() {
  const states: FailoverState[] = [];
  const failovers: { from: string; to: string | null; reason: string }[] = [];
  const failbacks: { from: string; to: string }[] = [];
  const degraded: boolean[] = [];
  const events: EvmRunEvents = {
    failover: (_s, from, to, _ms, reason) => void failovers.push({ from, to, reason }),
    failback: (_s, from, to) => void failbacks.push({ from, to }),
    backfill: () => undefined,
    degraded: (_s, on) => void degraded.push(on),
    gap: () => undefined,
    reorg: () => undefined,
    dedupeHits: () => undefined,
    written: () => undefined,
    providerError: () => undefined,
    stateChanged: (_s, state) => void states.push(state),
  };
  return { events, states, failovers, failbacks, degraded };
}

async function setup(chainOptions: Record<string, unknown> = {}, refused: readonly string[] = [], continuity = 'best_effort') {
  const clock = new ManualClock(1_000_000);
  const chain = new FakeChain();
  const sockets = new FakeSockets();
  for (const provider of refused) sockets.refuse(provider);
  const config = chainSchema.parse({
    providers: [
      { id: 'p0', wsUrl: 'ws://p0', httpUrl: 'http://p0', priority: 0 },
      { id: 'p1', wsUrl: 'ws://p1', httpUrl: 'http://p1', priority: 1 },
    ],
    blockTimeMs: 1_000,
    headPollMs: 100,
    stallMs: 3_000,
    lagBlocks: 3,
    maxFailovers: 3,
    failoverWindowMs: 10_000,
    degradedRecoverMs: 5_000,
    failbackHoldMs: 2_000,
    ...chainOptions,
  });
  const providers = new FakeProviders(chain, config.providers);
  const writer = new MemoryStreamWriter();
  writer.fences.set('s', 1);
  const spec = streamSpecSchema.parse({ stream: 's', chain: 'fake', kind: 'newHeads', continuity });
  const ctx: RunContext = {
    key: 's',
    state: await writer.loadState({ key: 's', token: 1 }),
    write: (b) => writer.write({ key: 's', token: 1 }, b),
    signal: new AbortController().signal,
  };
  const recorded = recordingEvents();
  const run = new EvmStreamRun(ctx, spec, config, providers, recorded.events, { clock, openSocket: sockets.open }).start();
  const blocks = (): number[] =>
    (writer.streams.get('s') ?? []).flatMap((e) => {
      const event = ingestEventSchema.parse(JSON.parse(e.data));
      return event.type === 'block' ? [event.number] : [];
    });
  /** Mines `n` blocks and pushes each on the live subscriptions (those of `on` only, when given). */
  const mine = (n: number, on?: string) => {
    for (let i = 0; i < n; i++) {
      chain.mine(1);
      sockets.push(chain.canonical[chain.canonical.length - 1], on);
    }
  };
  const head = () => chain.canonical.length - 1;
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
  return { clock, chain, sockets, providers, run, blocks, mine, head, range, ...recorded };
}

describe('EvmStreamRun', () => {
  it('subscribes on the preferred provider and writes each pushed block once', async () => {
    const t = await setup();
    t.mine(2);
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    expect(t.sockets.live()).toEqual(['p0']);
    t.mine(3);
    await t.clock.until(() => t.blocks().at(-1) === t.head(), 1_000);
    // Anchored at the head it found (block 2), then every block after it.
    expect(t.blocks()).toEqual(t.range(2, 5));
    expect(t.run.view()).toMatchObject({ state: 'active', provider: 'p0', preferredProvider: 'p0', onPreferred: true });
    expect(t.states).toEqual(['connecting', 'active']);
    await t.run.stop();
    expect(await t.run.ended).toEqual({ reason: 'stopped' });
    expect(t.sockets.live()).toEqual([]);
  });

  it('fails over on a dropped socket: backfills over HTTP what the gap missed, then switches to the next provider', async () => {
    const t = await setup();
    t.mine(1);
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    t.mine(2);
    t.sockets.refuse('p0');
    t.sockets.kill('p0');
    // Blocks mined while no socket is live reach the stream only through the gap-fill.
    t.chain.mine(4);
    await t.clock.until(() => t.run.view().provider === 'p1', 1_000);
    await t.clock.until(() => t.blocks().at(-1) === t.head(), 1_000);
    t.mine(2);
    await t.clock.until(() => t.blocks().at(-1) === t.head(), 1_000);
    expect(t.blocks()).toEqual(t.range(1, t.head()));
    expect(t.failovers).toEqual([{ from: 'p0', to: 'p1', reason: 'closed: socket closed' }]);
    expect(t.states).toEqual(['connecting', 'active', 'backfilling', 'switching', 'active']);
    expect(t.run.view()).toMatchObject({ provider: 'p1', preferredProvider: 'p0', onPreferred: false });
    await t.run.stop();
  });

  it('fails over away from a socket that went silent while the oracle moved on', async () => {
    const t = await setup();
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    t.chain.mine(2); // mined, never pushed: p0 is connected but quiet
    await t.clock.advance(2_900);
    expect(t.run.view().provider).toBe('p0');
    await t.clock.until(() => t.run.view().provider === 'p1', 1_000);
    expect(t.failovers[0]?.reason).toMatch(/^silent for \d+ ms while the oracle moved$/);
    await t.clock.until(() => t.blocks().at(-1) === t.head(), 1_000);
    expect(t.blocks()).toEqual(t.range(0, t.head()));
    await t.run.stop();
  });

  it('trips into degraded mode on the failover after maxFailovers within failoverWindowMs, follows over HTTP, and recovers', async () => {
    const t = await setup({ maxFailovers: 2, failoverWindowMs: 10_000 });
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    for (const expected of ['p1', 'p0']) {
      const current = t.run.view().provider ?? '';
      t.sockets.kill(current);
      await t.clock.until(() => t.run.view().provider === expected, 1_000);
    }
    expect(t.failovers.map((f) => f.to)).toEqual(['p1', 'p0']);
    expect(t.degraded).toEqual([]);
    // The third within the window trips the breaker: no switch, degraded.
    t.sockets.kill('p0');
    await t.clock.until(() => t.run.view().state === 'degraded', 1_000);
    expect(t.degraded).toEqual([true]);
    expect(t.sockets.live()).toEqual([]);
    // Degraded still follows the chain, over HTTP through the oracle.
    t.chain.mine(3);
    await t.clock.until(() => t.blocks().at(-1) === t.head(), 1_000);
    expect(t.blocks()).toEqual(t.range(0, t.head()));
    // After degradedRecoverMs it tries sockets again, by priority.
    await t.clock.until(() => t.run.view().state === 'active', 6_000);
    expect(t.degraded).toEqual([true, false]);
    expect(t.run.view().provider).toBe('p0');
    await t.run.stop();
  });

  it('does not trip when the same failovers are spread wider than the window', async () => {
    const t = await setup({ maxFailovers: 2, failoverWindowMs: 1_000 });
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    for (let i = 0; i < 4; i++) {
      const current = t.run.view().provider ?? '';
      t.sockets.kill(current);
      await t.clock.until(() => t.run.view().state === 'active' && t.run.view().provider !== current, 1_000);
      await t.clock.advance(600);
    }
    expect(t.degraded).toEqual([]);
    expect(t.failovers).toHaveLength(4);
    await t.run.stop();
  });

  it('goes degraded when no provider will subscribe, and leaves it once one does', async () => {
    const t = await setup({}, ['p0', 'p1']);
    t.chain.mine(2);
    await t.clock.until(() => t.run.view().state === 'degraded', 1_000);
    expect(t.run.view().provider).toBeNull();
    t.chain.mine(2);
    await t.clock.until(() => t.blocks().at(-1) === t.head(), 1_000);
    t.sockets.refuse('p1', false);
    await t.clock.until(() => t.run.view().state === 'active', 6_000);
    expect(t.run.view()).toMatchObject({ provider: 'p1', onPreferred: false });
    // Anchored where the first oracle poll found the head, then every block.
    expect(t.blocks()).toEqual(t.range(t.blocks()[0] ?? -1, t.head()));
    await t.run.stop();
  });

  it('fails back to the preferred provider once it has been healthy for the hold-down, with no block lost or doubled', async () => {
    const t = await setup({ failbackHoldMs: 2_000 });
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    t.sockets.refuse('p0');
    t.sockets.kill('p0');
    await t.clock.until(() => t.run.view().provider === 'p1', 1_000);
    // The preferred's HTTP is down too: the hold-down does not start.
    t.providers.httpDown('p0');
    await t.clock.advance(3_000);
    expect(t.run.view().provider).toBe('p1');
    // Healthy over HTTP but its WebSocket still refuses: the failback tries, fails, and waits a whole hold-down again.
    t.providers.httpDown('p0', false);
    await t.clock.advance(2_200);
    expect(t.sockets.subscribes.get('p0')).toBe(1);
    expect(t.run.view().provider).toBe('p1');
    t.sockets.refuse('p0', false);
    t.mine(2);
    await t.clock.advance(1_500);
    expect(t.run.view().provider).toBe('p1');
    t.mine(1);
    await t.clock.until(() => t.run.view().provider === 'p0', 1_000);
    expect(t.failbacks).toEqual([{ from: 'p1', to: 'p0' }]);
    expect(t.sockets.live()).toEqual(['p0']);
    expect(t.run.view()).toMatchObject({ state: 'active', provider: 'p0', preferredProvider: 'p0', onPreferred: true });
    t.mine(2, 'p0');
    await t.clock.until(() => t.blocks().at(-1) === t.head(), 1_000);
    expect(t.blocks()).toEqual(t.range(0, t.head()));
    // A failback is not a failover: nothing failed, and the breaker's window is not charged.
    expect(t.failovers).toHaveLength(1);
    await t.run.stop();
  });

  it('a strict stream that meets a gap over the limit ends halted, closes its socket and shows degraded', async () => {
    const t = await setup({ maxBackfillBlocks: 2 }, [], 'strict');
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    t.chain.mine(4);
    t.mine(1);
    await t.clock.until(() => t.run.view().state === 'degraded', 1_000);
    expect(await t.run.ended).toMatchObject({ reason: 'halted' });
    expect(t.sockets.live()).toEqual([]);
    expect(t.run.view()).toMatchObject({ state: 'degraded', provider: null, onPreferred: false });
    // ingest_stream_state says what the snapshot says.
    expect(t.states.at(-1)).toBe('degraded');
    expect(t.clock.pending).toBe(0);
  });

  it('stop closes the subscription and cancels every timer', async () => {
    const t = await setup();
    await t.clock.until(() => t.run.view().state === 'active', 1_000);
    await t.run.stop();
    expect(t.sockets.live()).toEqual([]);
    expect(t.clock.pending).toBe(0);
  });
});
