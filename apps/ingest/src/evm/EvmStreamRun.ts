import { errorMessage } from '@streamgate/ingest-core';
import { backoffDelay } from '@streamgate/protocol';
import type { AdapterRun, RunContext, RunEnd } from '@streamgate/ingest-core';
import { z } from 'zod';
import type { ChainConfig, ProviderConfig, StreamSpec } from '../config.js';
import { ChainFollower } from './ChainFollower.js';
import type { EvmRunEvents, FailoverState } from './evmEvents.js';
import type { EvmRunView } from './EvmRunView.js';
import type { ProviderPool } from './ProviderPool.js';
import { RpcFailure } from './RpcError.js';
import { RunStop } from './RunStop.js';
import type { RpcError } from './RpcError.js';
import { blockHeaderSchema, quantitySchema } from './rpcSchemas.js';
import type { BlockHeader } from './rpcSchemas.js';
import { WsRpcClient } from './WsRpcClient.js';

type QueueItem = { kind: 'head'; head: BlockHeader } | { kind: 'number'; number: number };

/**
 * One stream's upstream life: a single newHeads subscription on the best WebSocket provider,
 * watched against a head oracle (HTTP polls of the other providers). Failover goes
 * active → backfilling (HTTP gap-fill to the oracle's head) → switching (subscribe on the next
 * provider by priority, cascading) → active; too many failovers in a window → degraded, where
 * the stream follows the oracle over HTTP until it tries sockets again. Live pushes are queued
 * (bounded: dropping the oldest is safe because any later head backfills what it skipped) and
 * processed one at a time, deduplicated by hash.
 */
export class EvmStreamRun implements AdapterRun {
  readonly ended: Promise<RunEnd>;
  private finish: (end: RunEnd) => void = () => undefined;
  private state: FailoverState = 'connecting';
  private readonly follower: ChainFollower;
  private socket: WsRpcClient | null = null;
  private provider: ProviderConfig | null = null;
  private readonly queue: QueueItem[] = [];
  private wake: (() => void) | null = null;
  private stopped = false;
  private failoverTimes: number[] = [];
  private aheadSince: number | null = null;
  private lastPushNumber = -1;
  private oracleHead = -1;
  private oracleTimer: NodeJS.Timeout | undefined;
  private recoverTimer: NodeJS.Timeout | undefined;
  private switching = false;
  private lostWhileSwitching = false;
  private subscriptionId: string | null = null;
  private halted = false;

  constructor(
    private readonly ctx: RunContext,
    private readonly spec: StreamSpec,
    private readonly chain: ChainConfig,
    private readonly pool: ProviderPool,
    private readonly events: EvmRunEvents,
  ) {
    this.ended = new Promise((resolve) => (this.finish = resolve));
    this.follower = new ChainFollower(ctx, spec, chain, pool, events);
    ctx.signal.addEventListener('abort', () => void this.stop());
    if (this.follower.haltedReason !== null) {
      this.end({ reason: 'halted', message: this.follower.haltedReason });
      return;
    }
    void this.processLoop();
    void this.switchProvider(Date.now(), 'start', new Set());
    this.pollOracle();
  }

  /**
   * A halted stream (it wrote a stream error and waits for an operator) keeps its lease and
   * writes nothing more: it is shown as degraded, the worst state an operator can see.
   */
  view(): EvmRunView {
    const head = Math.max(this.oracleHead, this.lastPushNumber, this.follower.checkpoint?.number ?? -1);
    return {
      state: this.halted ? 'degraded' : this.state,
      provider: !this.halted && this.state === 'active' ? (this.provider?.id ?? null) : null,
      head: head < 0 ? null : head,
      lastWritten: this.follower.checkpoint?.number ?? null,
    };
  }

  private get headPollMs(): number {
    return this.chain.headPollMs ?? Math.max(50, Math.floor(this.chain.blockTimeMs / 2));
  }

  private get stallMs(): number {
    return this.chain.stallMs ?? this.chain.blockTimeMs * 3;
  }

  private setState(state: FailoverState): void {
    if (this.state === state) return;
    this.state = state;
    this.events.stateChanged(this.spec.stream, state);
  }

  private enqueue(item: QueueItem): void {
    this.queue.push(item);
    // Dropping the oldest is safe: the newest head backfills everything it skipped over.
    while (this.queue.length > this.chain.maxEventBuffer) this.queue.shift();
    this.wake?.();
  }

  private async processLoop(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      const item = this.queue[0];
      if (item === undefined) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      try {
        if (item.kind === 'head') await this.follower.onHead(item.head);
        else await this.follower.followNumber(item.number, this.provider?.id);
        if (this.queue[0] === item) this.queue.shift();
        attempt = 0;
      } catch (error) {
        if (error instanceof RunStop) {
          this.end(error.end);
          return;
        }
        // Upstream trouble while filling: keep the item and retry; a sick provider is sorted last.
        if (error instanceof RpcFailure) this.events.providerError(error.error.provider, error.error.code, error.error.message);
        else this.events.providerError('follower', 'unexpected', errorMessage(error));
        // A pushed head that keeps failing (e.g. its hash vanished in a reorg) is replaced by its
        // height: the block the node has there now is followed instead.
        if (attempt >= 4 && item.kind === 'head' && this.queue[0] === item) this.queue[0] = { kind: 'number', number: item.head.number };
        await new Promise((r) => setTimeout(r, backoffDelay(attempt++, 50, 2_000)));
      }
    }
  }

  private pollOracle(): void {
    if (this.stopped) return;
    this.oracleTimer = setTimeout(() => {
      void this.checkOracle().finally(() => this.pollOracle());
    }, this.headPollMs);
  }

  /** The head oracle: another provider's view of the head, to catch a socket that went quiet or fell behind. */
  private async checkOracle(): Promise<void> {
    const result = await this.pool.call('eth_blockNumber', [], quantitySchema, this.provider?.id);
    if (!result.ok) return;
    this.oracleHead = Math.max(this.oracleHead, result.value);
    if (this.state === 'degraded') {
      const cp = this.follower.checkpoint;
      if (cp === null || this.oracleHead > cp.number) this.enqueue({ kind: 'number', number: this.oracleHead });
      return;
    }
    if (this.state !== 'active' || this.provider === null) return;
    const behind = this.oracleHead - Math.max(this.lastPushNumber, this.follower.checkpoint?.number ?? -1);
    // Measured from when the oracle first got ahead, not from the last push: on a chain that was
    // idle, the oracle may see a new block a moment before its push arrives.
    if (behind <= 0) this.aheadSince = null;
    else this.aheadSince ??= Date.now();
    const aheadFor = this.aheadSince === null ? 0 : Date.now() - this.aheadSince;
    if (behind >= this.chain.lagBlocks) void this.failover(`lagging ${behind} blocks behind the oracle`);
    else if (aheadFor > this.stallMs) void this.failover(`silent for ${aheadFor} ms while the oracle moved`);
  }

  private onSocketFailed(socket: WsRpcClient, error: RpcError): void {
    if (socket !== this.socket) return;
    this.events.providerError(error.provider, error.code, error.message);
    void this.failover(`${error.code}: ${error.message}`);
  }

  private async failover(reason: string): Promise<void> {
    if (this.stopped || this.state === 'degraded') return;
    if (this.switching) {
      // The socket being set up died before the switch finished: the switch re-checks it.
      this.lostWhileSwitching = true;
      return;
    }
    const started = Date.now();
    const failed = this.provider;
    this.socket?.close();
    this.socket = null;
    this.provider = null;
    const now = Date.now();
    this.failoverTimes = [...this.failoverTimes.filter((t) => now - t < this.chain.failoverWindowMs), now];
    if (this.failoverTimes.length > this.chain.maxFailovers) {
      this.enterDegraded(`${this.failoverTimes.length} failovers within ${this.chain.failoverWindowMs} ms; last: ${reason}`);
      return;
    }
    // Backfill over HTTP up to the oracle's head before switching, so the new socket's first
    // pushes land on a stream that is already current.
    this.setState('backfilling');
    this.switching = true;
    try {
      const head = await this.pool.call('eth_blockNumber', [], quantitySchema, failed?.id);
      if (head.ok) {
        this.oracleHead = Math.max(this.oracleHead, head.value);
        this.enqueue({ kind: 'number', number: head.value });
      }
    } finally {
      this.switching = false;
    }
    await this.switchProvider(started, reason, new Set(failed === null ? [] : [failed.id]), failed?.id ?? 'none');
  }

  /** switching: subscribe on each candidate in priority order until one takes; none → degraded. */
  private async switchProvider(started: number, reason: string, exclude: Set<string>, from = 'none'): Promise<void> {
    if (this.stopped) return;
    this.switching = true;
    this.setState('switching');
    try {
      for (const candidate of this.pool.wsCandidates(exclude)) {
        if (this.stopped) return;
        if ((await this.subscribe(candidate)) && this.socket?.isOpen === true) {
          this.setState('active');
          if (from !== 'none') this.events.failover(this.spec.stream, from, candidate.id, Date.now() - started, reason);
          return;
        }
      }
      this.enterDegraded(`no WebSocket provider would subscribe (${reason})`);
      if (from !== 'none') this.events.failover(this.spec.stream, from, null, Date.now() - started, reason);
    } finally {
      this.switching = false;
      const lost = this.lostWhileSwitching;
      this.lostWhileSwitching = false;
      if (lost && this.state === 'active' && this.socket?.isOpen !== true) void this.failover('socket lost while switching');
    }
  }

  private async subscribe(provider: ProviderConfig): Promise<boolean> {
    if (provider.wsUrl === undefined) return false;
    let subscriptionId: string | null = null;
    const socket: WsRpcClient = new WsRpcClient(provider.id, provider.wsUrl, this.chain.requestTimeoutMs, {
      notification: (subscription, result) => {
        if (subscription !== subscriptionId || socket !== this.socket) return;
        const head = blockHeaderSchema.safeParse(result);
        if (!head.success) {
          this.onSocketFailed(socket, {
            code: 'garbage',
            retryable: true,
            provider: provider.id,
            message: 'newHeads push is not a block header',
          });
          return;
        }
        this.lastPushNumber = Math.max(this.lastPushNumber, head.data.number);
        this.enqueue({ kind: 'head', head: head.data });
      },
      failed: (error) => this.onSocketFailed(socket, error),
    });
    this.socket = socket;
    this.provider = provider;
    const opened = await socket.connect();
    const sub = opened.ok ? await socket.call('eth_subscribe', ['newHeads'], z.string()) : opened;
    if (!sub.ok || this.stopped) {
      if (!sub.ok) this.events.providerError(provider.id, sub.error.code, sub.error.message);
      if (this.socket === socket) {
        this.socket = null;
        this.provider = null;
      }
      socket.close();
      return false;
    }
    subscriptionId = sub.value;
    this.subscriptionId = sub.value;
    // Catch up to the head the node has now without waiting for the next push: a fresh stream
    // anchors there, a resumed one backfills from its checkpoint. The socket is judged against
    // the oracle only from this head on.
    const head = await this.pool.call('eth_blockNumber', [], quantitySchema);
    if (head.ok) {
      this.oracleHead = Math.max(this.oracleHead, head.value);
      this.enqueue({ kind: 'number', number: head.value });
    }
    this.aheadSince = null;
    this.lastPushNumber = Math.max(this.lastPushNumber, this.follower.checkpoint?.number ?? -1, this.oracleHead);
    return true;
  }

  private enterDegraded(why: string): void {
    this.setState('degraded');
    this.events.degraded(this.spec.stream, true);
    this.events.providerError('all', 'degraded', why);
    clearTimeout(this.recoverTimer);
    this.recoverTimer = setTimeout(() => {
      if (this.stopped) return;
      this.failoverTimes = [];
      this.events.degraded(this.spec.stream, false);
      void this.switchProvider(Date.now(), 'recovering from degraded mode', new Set());
    }, this.chain.degradedRecoverMs);
  }

  private end(end: RunEnd): void {
    this.stopped = true;
    this.halted = end.reason === 'halted';
    clearTimeout(this.oracleTimer);
    clearTimeout(this.recoverTimer);
    this.socket?.close();
    this.socket = null;
    this.wake?.();
    this.finish(end);
  }

  async stop(): Promise<void> {
    if (!this.stopped) {
      this.stopped = true;
      const socket = this.socket;
      if (socket !== null && this.subscriptionId !== null) {
        // Polite, bounded by the request timeout: closing the socket ends the subscription anyway.
        await socket.call('eth_unsubscribe', [this.subscriptionId], z.boolean());
      }
      this.end({ reason: 'stopped' });
    }
    await this.ended;
  }
}
