import type { z } from 'zod';
import { LogSpanBook } from '../LogSpanBook.js';
import type { RpcReader } from '../ProviderPool.js';
import type { RpcResult } from '../RpcError.js';
import { blockHeaderSchema } from '../rpcSchemas.js';
import type { BlockHeader } from '../rpcSchemas.js';

export const hex = (n: number) => `0x${n.toString(16)}`;
export const h32 = (tag: string) => `0x${Buffer.from(tag).toString('hex').padEnd(64, '0').slice(0, 64)}`;

export interface RawBlock {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
}
interface RawLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  transactionIndex: string;
  logIndex: string;
}

/** A chain in memory that answers the JSON-RPC reads the follower makes; blocks carry one log each. */
export class FakeChain implements RpcReader {
  readonly canonical: RawBlock[] = [];
  readonly byHash = new Map<string, RawBlock>();
  readonly logs = new Map<string, RawLog[]>();
  private fork = 0;
  readonly logSpans = new LogSpanBook();

  constructor() {
    this.add({ number: hex(0), hash: h32('genesis'), parentHash: h32('none'), timestamp: '0x0' }, false);
  }

  private add(block: RawBlock, withLog: boolean): RawBlock {
    this.canonical[Number.parseInt(block.number, 16)] = block;
    this.byHash.set(block.hash, block);
    this.logs.set(
      block.hash,
      withLog
        ? [
            {
              address: h32('addr').slice(0, 42),
              topics: [h32('t')],
              data: block.hash,
              blockNumber: block.number,
              blockHash: block.hash,
              transactionHash: h32(`tx${block.hash}`),
              transactionIndex: '0x0',
              logIndex: '0x0',
            },
          ]
        : [],
    );
    return block;
  }

  mine(count = 1): BlockHeader[] {
    const out: BlockHeader[] = [];
    for (let i = 0; i < count; i++) {
      const parent = this.canonical[this.canonical.length - 1];
      if (parent === undefined) throw new Error('no parent');
      const n = this.canonical.length;
      out.push(
        blockHeaderSchema.parse(
          this.add({ number: hex(n), hash: h32(`b${n}f${this.fork}`), parentHash: parent.hash, timestamp: hex(n) }, true),
        ),
      );
    }
    return out;
  }

  /** Replaces the top `depth` blocks with new ones and returns their heads. */
  reorg(depth: number): BlockHeader[] {
    this.fork += 1;
    const keep = this.canonical.length - depth;
    this.canonical.length = keep;
    return this.mine(depth);
  }

  /** The canonical chain as it is now, to switch back to later with `restore`. */
  snapshot(): RawBlock[] {
    return [...this.canonical];
  }

  /** Makes an earlier snapshot canonical again: the same blocks, the same hashes. */
  restore(blocks: readonly RawBlock[]): BlockHeader {
    this.canonical.length = 0;
    this.canonical.push(...blocks);
    return blockHeaderSchema.parse(blocks[blocks.length - 1]);
  }

  httpProviderIds(): string[] {
    return ['fake'];
  }

  callOn<S extends z.ZodType>(_provider: string, method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    return this.call(method, params, schema);
  }

  call<S extends z.ZodType>(method: string, params: readonly unknown[], schema: S): Promise<RpcResult<z.output<S>>> {
    let raw: unknown;
    const [first] = params;
    if (method === 'eth_blockNumber') raw = hex(this.canonical.length - 1);
    else if (method === 'eth_getBlockByNumber') raw = this.canonical[Number.parseInt(String(first), 16)] ?? null;
    else if (method === 'eth_getBlockByHash') raw = this.byHash.get(String(first)) ?? null;
    else if (method === 'eth_getLogs') {
      const filter = first as { blockHash?: string; fromBlock?: string; toBlock?: string };
      if (filter.blockHash !== undefined) raw = this.logs.get(filter.blockHash);
      else {
        const from = Number.parseInt(filter.fromBlock ?? '0x0', 16);
        const to = Number.parseInt(filter.toBlock ?? '0x0', 16);
        raw = this.canonical.slice(from, to + 1).flatMap((b) => this.logs.get(b.hash) ?? []);
      }
      if (raw === undefined)
        return Promise.resolve({
          ok: false,
          error: { code: 'rpc_error', retryable: true, provider: 'fake', message: 'unknown block', rpcCode: -32000 },
        });
    }
    const parsed = schema.safeParse(raw);
    return Promise.resolve(
      parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, error: { code: 'garbage', retryable: true, provider: 'fake', message: method } },
    );
  }
}
