import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { anvilPlatformPackage } from './anvilPlatformPackage.js';
import { freePort } from './freePort.js';
import { ServiceError, spawnService } from './spawnService.js';
import type { Service } from './spawnService.js';
import { waitFor } from './waitFor.js';

export interface StartAnvilOptions {
  /** Seconds between automatic blocks; default none (blocks only on transactions or anvil_mine). */
  blockTime?: number;
  chainId?: number;
  args?: readonly string[];
  echo?: boolean;
}

export interface AnvilNode extends AsyncDisposable {
  readonly port: number;
  readonly httpUrl: string;
  readonly wsUrl: string;
  readonly service: Service;
  /** One JSON-RPC call over HTTP; rejects on a JSON-RPC error. */
  rpc<T = unknown>(method: string, params?: readonly unknown[]): Promise<T>;
  /** Mines `blocks` blocks now and resolves with the new head number. */
  mine(blocks?: number): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The anvil binary: `STREAMGATE_ANVIL` when set, else the one `@foundry-rs/anvil` installed for
 * this platform through its optional dependencies. Its own `anvil` bin is a Node wrapper; the
 * binary itself is spawned so that signals and the parent-death guard reach anvil directly.
 */
export function anvilBinary(): string {
  const override = process.env.STREAMGATE_ANVIL;
  if (override !== undefined && override.trim() !== '') return override;
  const choice = anvilPlatformPackage(process.platform, process.arch);
  if (!choice.ok) throw new Error(choice.message);
  // The platform package is @foundry-rs/anvil's dependency, not ours (pnpm keeps it out of our
  // node_modules), so it is resolved from there.
  const fromAnvil = createRequire(createRequire(import.meta.url).resolve('@foundry-rs/anvil/package.json'));
  let manifest: string;
  try {
    manifest = fromAnvil.resolve(`${choice.name}/package.json`);
  } catch (error) {
    throw new Error(
      `${choice.name} (anvil for ${process.platform} ${process.arch}) is not installed: optional dependencies were ` +
        'skipped. Reinstall with them (`node scripts/bootstrap.mjs`, or `pnpm install` without --no-optional).',
      { cause: error },
    );
  }
  return join(dirname(manifest), choice.binary);
}

/** A real anvil node on a free loopback port (HTTP and WebSocket on the same port). */
export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilNode> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    const service = await spawnService({
      name: `anvil:${port}`,
      command: anvilBinary(),
      args: [
        '--port',
        String(port),
        '--host',
        '127.0.0.1',
        '--silent',
        ...(options.blockTime === undefined ? [] : ['--block-time', String(options.blockTime)]),
        ...(options.chainId === undefined ? [] : ['--chain-id', String(options.chainId)]),
        ...(options.args ?? []),
      ],
      ...(options.echo === undefined ? {} : { echo: options.echo }),
    });
    const httpUrl = `http://127.0.0.1:${port}`;
    let id = 0;
    const rpc = async <T>(method: string, params: readonly unknown[] = []): Promise<T> => {
      const response = await fetch(httpUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
      });
      const body = (await response.json()) as { result?: T; error?: { message: string } };
      if (body.error !== undefined) throw new Error(`${method}: ${body.error.message}`);
      return body.result as T;
    };
    try {
      await waitFor(async () => typeof (await rpc('eth_blockNumber')) === 'string', {
        timeoutMs: 15_000,
        message: `anvil on ${port} answers eth_blockNumber`,
      });
    } catch (error) {
      lastError = new ServiceError(service.name, 'never answered', service.output(), { cause: error });
      await service.stop();
      if (service.exitStatus?.code !== null && /in use/i.test(service.output())) continue;
      throw lastError;
    }
    const stop = async () => {
      await service.stop();
    };
    return {
      port,
      httpUrl,
      wsUrl: `ws://127.0.0.1:${port}`,
      service,
      rpc,
      mine: async (blocks = 1) => {
        await rpc('anvil_mine', [`0x${blocks.toString(16)}`]);
        return Number.parseInt(await rpc<string>('eth_blockNumber'), 16);
      },
      stop,
      [Symbol.asyncDispose]: stop,
    };
  }
  throw lastError;
}
