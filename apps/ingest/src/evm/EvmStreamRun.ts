import { sleepOn, systemClock } from '@streamgate/protocol';
import type { AdapterRun, RunContext, RunEnd } from '@streamgate/ingest-core';
import type { Clock } from '@streamgate/protocol';
import { backoffDelay } from '@streamgate/protocol';
import { z } from 'zod';
import type { ChainConfig, ProviderConfig, StreamSpec } from '../config.js';
import { ChainFollower } from './ChainFollower.js';
import type { EvmRunEvents, FailoverState } from './evmEvents.js';
import type { EvmRunView } from './EvmRunView.js';
import { FailbackHold } from './FailbackHold.js';
import { FailoverWindow } from './FailoverWindow.js';
import { HeadQueue } from './HeadQueue.js';
import type { EvmProviders } from './ProviderPool.js';
import type { RpcError } from './RpcError.js';
import { blockHeaderSchema, quantitySchema } from './rpcSchemas.js';
import { canMove } from './RunPhase.js';
import type { HeadLink, RunPhase } from './RunPhase.js';
import { openWsRpcSocket } from './RpcSocket.js';
import type { OpenRpcSocket, RpcSocket } from './RpcSocket.js';

export interface EvmRunOptions {
  readonly clock?: Clock;
  readonly openSocket?: OpenRpcSocket;
}

/** A subscription being set up (a switch's candidate, or a failback's): it may die before it is used. */
interface Candidate {
  readonly socket: RpcSocket;
  lost: boolean;
}

/**
 * One stream's upstream life: a single newHeads subscription on the best WebSocket provider,
 * watched against a head oracle (HTTP polls of the other providers), as the state machine in
 * RunPhase.ts. Pushes are queued and followed one at a time, deduplicated by hash. While on a
 * provider other than the preferred one (lowest `priority`), the run probes the preferred at each
 * head poll and fails back to it once it has been healthy for `failbackHoldMs`.
 */
export class EvmStreamRun implements AdapterRun {
  readonly ended: Promise<RunEnd>;
  private finish: (end: RunEnd) => void = () => undefined;
  private phase: RunPhase = { state: 'switching' };
  /** Whether a subscription ever took: before that, `switching` is shown as `connecting`. */
  private wasActive = false;
  private shownState: FailoverState | null = null;
  private readonly follower: ChainFollower;
  private readonly queue: HeadQueue;
  private readonly window: FailoverWindow;
  private readonly hold: FailbackHold;
  private readonly stopping = new AbortController();
  private readonly clock: Clock;
  private readonly openSocket: OpenRpcSocket;
  private candidate: Candidate | null = null;
  private aheadSince: number | null = null;
  private lastPushNumber = -1;
  private oracleHead = -1;
  private cancelOracle: () => void = () => undefined;
  private cancelRecover: () => void = () => undefined;

  constructor(
    private readonly ctx: RunContext,
    private readonly spec: StreamSpec,
    private readonly chain: ChainConfig,
    private readonly pool: EvmProviders,
    private readonly events: EvmRunEvents,
    options: EvmRunOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.openSocket = options.openSocket ?? openWsRpcSocket;
    this.ended = new Promise((resolve) => (this.finish = resolve));
    this.follower = new ChainFollower(ctx, spec, chain, pool, events, this.clock);
    this.queue = new HeadQueue(chain.maxEventBuffer);
    this.window = new FailoverWindow(chain.failoverWindowMs);
    this.hold = new FailbackHold(pool.wsCandidates(new Set())[0] ?? null, pool, chain.failbackHoldMs, chain.lagBlocks);
  }

  /** Starts the follow loop, the first subscription and the head oracle; a halted stream ends at once. */
  start(): this {
    if (this.ctx.signal.aborted) {
      this.end({ reason: 'stopped' });
      return this;
    }
    this.ctx.signal.addEventListener('abort', () => void this.stop(), { once: true });
    const halted = this.follower.haltedReason;
    if (halted !== null) {
      this.end({ reason: 'halted', message: halted });
      return this;
    }
    this.showState();
    void this.followLoop();
    void this.switchTo(this.clock.now(), 'start', new Set(), null);
    this.pollOracle();
    return this;
  }

  /**
   * A halted stream (it wrote a stream error and waits for an operator) keeps its lease and
   * writes nothing more: it is shown as degraded, the worst state an operator can see.
   */
  view(): EvmRunView {
    const phase = this.phase;
    const checkpoint = this.follower.checkpoint?.number ?? -1;
    const head = Math.max(this.oracleHead, this.lastPushNumber, checkpoint);
    const provider = phase.state === 'active' ? phase.link.provider.id : null;
    return {
      state: this.visibleState(),
      provider,
      preferredProvider: this.hold.preferred?.id ?? null,
      onPreferred: provider !== null && provider === this.hold.preferred?.id,
      head: head < 0 ? null : head,
      lastWritten: this.follower.checkpoint?.number ?? null,
    };
  }

  async stop(): Promise<void> {
    const phase = this.phase;
    if (phase.state !== 'stopped') {
      const link = phase.state === 'active' ? phase.link : null;
      this.move({ state: 'stopped', end: { reason: 'stopped' } });
      // Polite, bounded by the request timeout: closing the socket ends the subscription anyway.
      if (link !== null) await link.socket.call('eth_unsubscribe', [link.subscriptionId], z.boolean());
      this.release(link, { reason: 'stopped' });
    }
    await this.ended;
  }

  private get headPollMs(): number {
    return this.chain.headPollMs ?? Math.max(50, Math.floor(this.chain.blockTimeMs / 2));
  }

  private get stallMs(): number {
    return this.chain.stallMs ?? this.chain.blockTimeMs * 3;
  }

  private get stopped(): boolean {
    return this.phase.state === 'stopped';
  }

  private visibleState(): FailoverState {
    const phase = this.phase;
    if (phase.state === 'stopped') return 'degraded';
    if (phase.state === 'switching' && !this.wasActive) return 'connecting';
    return phase.state;
  }

  private move(next: RunPhase): void {
    if (!canMove(this.phase.state, next.state)) throw new Error(`EvmStreamRun: ${this.phase.state} → ${next.state} is not a transition`);
    this.phase = next;
    if (next.state === 'active') this.wasActive = true;
    if (next.state === 'stopped') {
      this.stopping.abort();
      this.cancelOracle();
      this.cancelRecover();
    }
    this.showState();
  }

  private showState(): void {
    const state = this.visibleState();
    if (this.phase.state === 'stopped' || state === this.shownState) return;
    this.shownState = state;
    this.events.stateChanged(this.spec.stream, state);
  }

  private async followLoop(): Promise<void> {
    let attempt = 0;
    for (;;) {
      const item = await this.queue.next(this.stopping.signal);
      if (item === undefined) return;
      const phase = this.phase;
      const outcome =
        item.kind === 'head'
          ? await this.follower.onHead(item.head)
          : await this.follower.followNumber(item.number, phase.state === 'active' ? phase.link.provider.id : undefined);
      if (outcome.ok) {
        this.queue.done(item);
        attempt = 0;
        continue;
      }
      if (outcome.kind === 'end') return this.end(outcome.end);
      // Upstream trouble while filling: keep the item and retry; a sick provider is sorted last.
      this.events.providerError(outcome.provider, outcome.code, outcome.message);
      if (attempt >= 4 && item.kind === 'head') this.queue.replace(item, { kind: 'number', number: item.head.number });
      await sleepOn(this.clock, backoffDelay(attempt++, 50, 2_000), this.stopping.signal);
    }
  }

  private pollOracle(): void {
    if (this.stopped) return;
    this.cancelOracle = this.clock.after(this.headPollMs, () => {
      void this.checkOracle().finally(() => this.pollOracle());
    });
  }

  /** The head oracle: another provider's view of the head, to catch a socket that went quiet or fell behind. */
  private async checkOracle(): Promise<void> {
    const before = this.phase;
    const result = await this.pool.call(
      'eth_blockNumber',
      [],
      quantitySchema,
      before.state === 'active' ? before.link.provider.id : undefined,
    );
    if (!result.ok) return;
    this.oracleHead = Math.max(this.oracleHead, result.value);
    const phase = this.phase;
    if (phase.state === 'degraded') {
      const cp = this.follower.checkpoint;
      if (cp === null || this.oracleHead > cp.number) this.queue.push({ kind: 'number', number: this.oracleHead });
      return;
    }
    if (phase.state !== 'active') return;
    const behind = this.oracleHead - Math.max(this.lastPushNumber, this.follower.checkpoint?.number ?? -1);
    // Measured from when the oracle first got ahead, not from the last push: on a chain that was
    // idle, the oracle may see a new block a moment before its push arrives.
    const now = this.clock.now();
    if (behind <= 0) this.aheadSince = null;
    else this.aheadSince ??= now;
    const aheadFor = this.aheadSince === null ? 0 : now - this.aheadSince;
    if (behind >= this.chain.lagBlocks) return this.failover(`lagging ${behind} blocks behind the oracle`);
    if (aheadFor > this.stallMs) return this.failover(`silent for ${aheadFor} ms while the oracle moved`);
    await this.checkFailback(phase.link);
  }

  private onSocketFailed(socket: RpcSocket, error: RpcError): void {
    const phase = this.phase;
    if (this.candidate?.socket === socket) {
      // The subscription being set up died before it was used: the switch moves on to the next one.
      this.candidate.lost = true;
      this.events.providerError(error.provider, error.code, error.message);
      return;
    }
    if (phase.state !== 'active' || phase.link.socket !== socket) return;
    this.events.providerError(error.provider, error.code, error.message);
    void this.failover(`${error.code}: ${error.message}`);
  }

  /** active → backfilling → switching, or → degraded when the window's breaker trips. */
  private async failover(reason: string): Promise<void> {
    const phase = this.phase;
    if (phase.state !== 'active') return;
    const started = this.clock.now();
    const failed = phase.link.provider;
    phase.link.socket.close();
    const recent = this.window.record(started);
    if (recent > this.chain.maxFailovers) {
      return this.enterDegraded(`${recent} failovers within ${this.chain.failoverWindowMs} ms; last: ${reason}`);
    }
    this.move({ state: 'backfilling' });
    if (!(await this.catchUp(failed.id)) || this.phase.state !== 'backfilling') return;
    await this.switchTo(started, reason, new Set([failed.id]), failed.id);
  }

  /**
   * Queues the HTTP head for gap-fill, so the next socket's first pushes land on a stream that
   * is already current. False once the run stopped meanwhile.
   */
  private async catchUp(avoid?: string): Promise<boolean> {
    const head = await this.pool.call('eth_blockNumber', [], quantitySchema, avoid);
    if (this.stopped) return false;
    if (head.ok) {
      this.oracleHead = Math.max(this.oracleHead, head.value);
      this.queue.push({ kind: 'number', number: head.value });
    }
    return true;
  }

  /** switching: subscribe on each candidate in priority order until one takes; none → degraded. */
  private async switchTo(started: number, reason: string, exclude: ReadonlySet<string>, from: string | null): Promise<void> {
    if (this.stopped) return;
    this.move({ state: 'switching' });
    for (const provider of this.pool.wsCandidates(exclude)) {
      const link = await this.connect(provider);
      if (this.phase.state !== 'switching') {
        link?.socket.close();
        return;
      }
      if (link === null) continue;
      this.activate(link);
      if (from !== null) this.events.failover(this.spec.stream, from, provider.id, this.clock.now() - started, reason);
      return;
    }
    this.enterDegraded(`no WebSocket provider would subscribe (${reason})`);
    if (from !== null) this.events.failover(this.spec.stream, from, null, this.clock.now() - started, reason);
  }

  /**
   * Failback, make-before-break: the preferred's subscription is set up beside the live one, and
   * the old one closes only once the new one took. Its catch-up head is gap-filled like a failover's.
   */
  private async checkFailback(link: HeadLink): Promise<void> {
    const preferred = this.hold.preferred;
    if (preferred === null || link.provider.id === preferred.id || this.candidate !== null) return;
    const due = await this.hold.due(this.oracleHead, () => this.clock.now());
    if (!due || this.phase.state !== 'active' || this.phase.link !== link) return;
    const started = this.clock.now();
    const next = await this.connect(preferred);
    if (this.phase.state !== 'active' || this.phase.link !== link) return next?.socket.close();
    if (next === null) return this.hold.reset();
    this.activate(next);
    link.socket.close();
    this.events.failback(this.spec.stream, link.provider.id, preferred.id, this.clock.now() - started);
  }

  /** Opens a socket on `provider`, subscribes to newHeads and queues the head; null if any of it fails. */
  private async connect(provider: ProviderConfig): Promise<HeadLink | null> {
    if (provider.wsUrl === undefined || this.stopped) return null;
    let subscriptionId: string | null = null;
    const socket: RpcSocket = this.openSocket(provider.id, provider.wsUrl, this.chain.requestTimeoutMs, {
      notification: (subscription, result) => {
        if (subscription !== subscriptionId || !this.carries(socket)) return;
        const head = blockHeaderSchema.safeParse(result);
        if (!head.success) {
          const message = 'newHeads push is not a block header';
          return this.onSocketFailed(socket, { code: 'garbage', retryable: true, provider: provider.id, message });
        }
        this.lastPushNumber = Math.max(this.lastPushNumber, head.data.number);
        this.queue.push({ kind: 'head', head: head.data });
      },
      failed: (error) => this.onSocketFailed(socket, error),
    });
    const candidate: Candidate = { socket, lost: false };
    this.candidate = candidate;
    try {
      const opened = await socket.connect();
      const sub = opened.ok ? await socket.call('eth_subscribe', ['newHeads'], z.string()) : opened;
      if (!sub.ok) this.events.providerError(provider.id, sub.error.code, sub.error.message);
      if (!sub.ok || this.stopped || candidate.lost) {
        socket.close();
        return null;
      }
      subscriptionId = sub.value;
      // Catch up to the head the node has now without waiting for the next push: a fresh stream
      // anchors there, a resumed one backfills from its checkpoint.
      if (!(await this.catchUp()) || candidate.lost || !socket.isOpen) {
        socket.close();
        return null;
      }
      return { provider, socket, subscriptionId };
    } finally {
      if (this.candidate === candidate) this.candidate = null;
    }
  }

  /** Whether pushes from `socket` are followed: the live subscription's, or the one being set up. */
  private carries(socket: RpcSocket): boolean {
    const phase = this.phase;
    return (phase.state === 'active' && phase.link.socket === socket) || this.candidate?.socket === socket;
  }

  /** The socket is judged against the oracle only from its catch-up head on. */
  private activate(link: HeadLink): void {
    this.move({ state: 'active', link });
    this.aheadSince = null;
    this.lastPushNumber = Math.max(this.lastPushNumber, this.follower.checkpoint?.number ?? -1, this.oracleHead);
    // The hold-down counts from now: a provider is given the whole of it after the run left it.
    if (link.provider.id !== this.hold.preferred?.id) this.hold.reset();
  }

  private enterDegraded(why: string): void {
    this.move({ state: 'degraded' });
    this.events.degraded(this.spec.stream, true);
    this.events.providerError('all', 'degraded', why);
    this.cancelRecover();
    this.cancelRecover = this.clock.after(this.chain.degradedRecoverMs, () => {
      if (this.phase.state !== 'degraded') return;
      this.window.clear();
      this.events.degraded(this.spec.stream, false);
      void this.switchTo(this.clock.now(), 'recovering from degraded mode', new Set(), null);
    });
  }

  private end(end: RunEnd): void {
    const phase = this.phase;
    if (phase.state === 'stopped') return;
    this.move({ state: 'stopped', end });
    // A halted stream keeps its lease and waits for an operator: ingest_stream_state shows it
    // degraded, as the snapshot does (view), not in the state it was in when it stopped.
    if (end.reason === 'halted' && this.shownState !== 'degraded') {
      this.shownState = 'degraded';
      this.events.stateChanged(this.spec.stream, 'degraded');
    }
    this.release(phase.state === 'active' ? phase.link : null, end);
  }

  private release(link: HeadLink | null, end: RunEnd): void {
    link?.socket.close();
    this.candidate?.socket.close();
    this.finish(end);
  }
}
