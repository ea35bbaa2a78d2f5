import { startAnvil, startFaultProxy } from '@streamgate/testkit';
import type { AnvilNode, FaultMode, FaultProxy } from '@streamgate/testkit';
import { LOG_TOPIC, deployLogEmitter, emitRequest } from './logEmitter.js';

export const FLEET_CHAIN = 'anvil';
export const FLEET_HEADS_STREAM = 'evm:anvil:heads';
export const FLEET_LOGS_STREAM = 'evm:anvil:logs';

export interface FleetChainOptions {
  /** Provider names, most preferred first; each is its own fault proxy in front of the one node. */
  providers: readonly string[];
  /** One emitting transaction (so one block with one log) this often. */
  blockMs: number;
  /** A transaction that failed to send. */
  onError?: (error: unknown) => void;
}

export interface FleetChain extends AsyncDisposable {
  readonly anvil: AnvilNode;
  readonly providers: ReadonlyMap<string, FaultProxy>;
  /** The log emitter contract's address: the logs stream's filter. */
  readonly emitter: string;
  /** The `chains` and `streams` parts of the ingest topology. */
  readonly topology: { chains: Record<string, unknown>; streams: unknown[] };
  /** Transactions sent and failed so far. */
  readonly sent: number;
  readonly failed: number;
  setMode(provider: string, mode: FaultMode, only?: 'ws' | 'http'): boolean;
  stop(): Promise<void>;
}

/**
 * A local chain worth following: a real anvil, a contract that logs, a transaction every
 * `blockMs` (anvil mines each into its own block, so there are heads and logs), and one fault
 * proxy per named provider, so a provider can be cut or stalled while the others serve.
 */
export async function startFleetChain(options: FleetChainOptions): Promise<FleetChain> {
  const anvil = await startAnvil();
  const providers = new Map<string, FaultProxy>();
  try {
    for (const name of options.providers) providers.set(name, await startFaultProxy(anvil));
    const emitter = await deployLogEmitter(anvil);
    let sent = 0;
    let failed = 0;
    let payload = 0;
    const timer = setInterval(() => {
      anvil.rpc('eth_sendTransaction', [emitRequest(emitter, payload++)]).then(
        () => sent++,
        (error: unknown) => {
          failed++;
          options.onError?.(error);
        },
      );
    }, options.blockMs);
    timer.unref();

    const { blockMs } = options;
    const chain = {
      providers: [...providers].map(([id, proxy], priority) => ({ id, wsUrl: proxy.wsUrl, httpUrl: proxy.httpUrl, priority })),
      blockTimeMs: blockMs,
      headPollMs: Math.max(50, Math.min(250, Math.floor(blockMs / 2))),
      // A silent socket is given three blocks' time before the worker moves on.
      stallMs: Math.max(1_500, 3 * blockMs),
      lagBlocks: 3,
      requestTimeoutMs: 2_000,
      // A newcomer cutting providers back and forth should see failovers, not a give-up.
      maxFailovers: 20,
      failoverWindowMs: 10_000,
      degradedRecoverMs: 5_000,
      // After `restore primary` the stream returns to it, soon enough for a newcomer to watch.
      failbackHoldMs: 10_000,
    };
    const stop = async () => {
      clearInterval(timer);
      await Promise.allSettled([...providers.values()].map((p) => p.close()));
      await anvil.stop();
    };
    return {
      anvil,
      providers,
      emitter,
      topology: {
        chains: { [FLEET_CHAIN]: chain },
        streams: [
          { stream: FLEET_HEADS_STREAM, chain: FLEET_CHAIN, kind: 'newHeads' },
          { stream: FLEET_LOGS_STREAM, chain: FLEET_CHAIN, kind: 'logs', filter: { address: emitter, topics: [LOG_TOPIC] } },
        ],
      },
      get sent() {
        return sent;
      },
      get failed() {
        return failed;
      },
      setMode: (provider, mode, only) => {
        const proxy = providers.get(provider);
        if (proxy === undefined) return false;
        proxy.setMode(mode, only === undefined ? {} : { only });
        return true;
      },
      stop,
      [Symbol.asyncDispose]: stop,
    };
  } catch (error) {
    await Promise.allSettled([...providers.values()].map((p) => p.close()));
    await anvil.stop();
    throw error;
  }
}
