import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import type { RawData } from 'ws';
import { z } from 'zod';

/** The address every scripted log comes from (a logs stream filters on it). */
export const SCRIPTED_ADDRESS = `0x${'5c'.repeat(20)}`;
export const SCRIPTED_TOPIC = `0x${'cd'.repeat(32)}`;

export interface ScriptedBlock {
  readonly number: number;
  readonly hash: string;
  readonly parentHash: string;
  /** How many logs the block carries (0–2); their content derives from the hash. */
  readonly logCount: number;
}

export interface ScriptedLog {
  readonly blockNumber: number;
  readonly blockHash: string;
  readonly logIndex: number;
  readonly data: string;
}

const hex = (n: number) => `0x${n.toString(16)}`;
const hash32 = (seed: string) => `0x${createHash('sha256').update(seed).digest('hex')}`;
const requestSchema = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.number(), z.string()]),
  method: z.string(),
  params: z.array(z.unknown()).default([]),
});
const logFilterSchema = z.object({ blockHash: z.string().optional(), fromBlock: z.string().optional(), toBlock: z.string().optional() });

/**
 * A JSON-RPC chain a test scripts block by block, served over real HTTP and WebSocket on one
 * port like a node: eth_blockNumber, eth_getBlockByNumber/Hash, eth_getLogs (by hash or range),
 * eth_subscribe('newHeads'). Every block ever made stays known by hash, so the test can make any
 * earlier branch canonical again (a reorg that flips back) with the very same hashes and logs.
 */
export class ScriptedChain {
  private readonly byHash = new Map<string, ScriptedBlock>();
  private canonical: ScriptedBlock[] = [];
  private made = 0;
  private readonly sockets = new Set<WebSocket>();
  private readonly subscriptions = new Map<WebSocket, Set<string>>();
  private readonly raw = new Set<Socket>();
  private nextSub = 1;
  httpUrl = '';
  wsUrl = '';
  private closeServer: () => Promise<void> = () => Promise.resolve();

  constructor(private readonly random: () => number) {
    const genesis: ScriptedBlock = { number: 0, hash: hash32('genesis'), parentHash: `0x${'0'.repeat(64)}`, logCount: 0 };
    this.byHash.set(genesis.hash, genesis);
    this.canonical = [genesis];
  }

  get tip(): ScriptedBlock {
    const tip = this.canonical[this.canonical.length - 1];
    if (tip === undefined) throw new Error('empty chain');
    return tip;
  }

  blocks(): readonly ScriptedBlock[] {
    return this.canonical;
  }

  /** Logs of canonical blocks from `from` on, as a node's range query would answer. */
  logsFrom(from: number): ScriptedLog[] {
    return this.canonical.slice(from).flatMap((b) => this.logsOf(b));
  }

  logsOf(block: ScriptedBlock): ScriptedLog[] {
    return Array.from({ length: block.logCount }, (_, i) => ({
      blockNumber: block.number,
      blockHash: block.hash,
      logIndex: i,
      data: hash32(`${block.hash}:${i}`),
    }));
  }

  /** Extends the canonical chain by `count` new blocks; pushes the new tip (or every block). */
  mine(count: number, pushEach = false): void {
    const made: ScriptedBlock[] = [];
    for (let i = 0; i < count; i++) made.push(this.append());
    this.announce(made, pushEach);
  }

  /** Replaces the top `depth` blocks by `length` new ones (a new branch). */
  reorg(depth: number, length: number, pushEach = false): void {
    this.canonical = this.canonical.slice(0, this.canonical.length - depth);
    const made: ScriptedBlock[] = [];
    for (let i = 0; i < length; i++) made.push(this.append());
    this.announce(made, pushEach);
  }

  /** Makes the branch ending at `tipHash` (made earlier) canonical again. */
  switchTo(tipHash: string): void {
    const path: ScriptedBlock[] = [];
    for (let b = this.byHash.get(tipHash); b !== undefined; b = this.byHash.get(b.parentHash)) path.unshift(b);
    if (path[0]?.number !== 0) throw new Error(`unknown branch ${tipHash}`);
    this.canonical = path;
    // A node announces its new head even when it is a block it had already (a shorter chain won).
    this.announce(path.slice(-1), false);
  }

  /** The highest height `hash`'s branch shares with the canonical chain. */
  commonAncestor(hash: string): number {
    for (let b = this.byHash.get(hash); b !== undefined; b = this.byHash.get(b.parentHash)) {
      if (this.canonical[b.number]?.hash === b.hash) return b.number;
    }
    return -1;
  }

  /** Pushes a header that is not canonical any more, as a node's queued push after a reorg would. */
  pushStale(hash: string): void {
    const block = this.byHash.get(hash);
    if (block !== undefined) this.push(block);
  }

  private append(): ScriptedBlock {
    const parent = this.tip;
    const block: ScriptedBlock = {
      number: parent.number + 1,
      hash: hash32(`block${this.made++}`),
      parentHash: parent.hash,
      logCount: Math.floor(this.random() * 3),
    };
    this.byHash.set(block.hash, block);
    this.canonical.push(block);
    return block;
  }

  private announce(made: readonly ScriptedBlock[], pushEach: boolean): void {
    const list = pushEach ? made : made.slice(-1);
    for (const block of list) this.push(block);
  }

  private push(block: ScriptedBlock): void {
    for (const [socket, subs] of this.subscriptions) {
      for (const subscription of subs) {
        socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription, result: this.header(block) } }));
      }
    }
  }

  private header(b: ScriptedBlock) {
    return { number: hex(b.number), hash: b.hash, parentHash: b.parentHash, timestamp: hex(1_700_000_000 + b.number), logsBloom: '0x' };
  }

  private rpcLog(l: ScriptedLog) {
    return {
      address: SCRIPTED_ADDRESS,
      topics: [SCRIPTED_TOPIC],
      data: l.data,
      blockNumber: hex(l.blockNumber),
      blockHash: l.blockHash,
      transactionHash: hash32(`tx:${l.blockHash}:${l.logIndex}`),
      transactionIndex: hex(l.logIndex),
      logIndex: hex(l.logIndex),
      removed: false,
    };
  }

  private blockAt(tag: unknown): ScriptedBlock | undefined {
    if (tag === 'latest') return this.tip;
    return typeof tag === 'string' ? this.canonical[Number.parseInt(tag, 16)] : undefined;
  }

  /** One JSON-RPC request → its answer; `socket` is set for WebSocket calls. */
  private answer(text: string, socket?: WebSocket): unknown {
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } };
    }
    const req = requestSchema.safeParse(body);
    if (!req.success) return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'invalid request' } };
    const { id, method, params } = req.data;
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    switch (method) {
      case 'eth_chainId':
        return ok('0x7a69');
      case 'eth_blockNumber':
        return ok(hex(this.tip.number));
      case 'eth_getBlockByNumber': {
        const b = this.blockAt(params[0]);
        return ok(b === undefined ? null : this.header(b));
      }
      case 'eth_getBlockByHash': {
        const b = this.byHash.get(String(params[0]));
        return ok(b === undefined ? null : this.header(b));
      }
      case 'eth_getLogs': {
        const filter = logFilterSchema.safeParse(params[0]);
        if (!filter.success) return { jsonrpc: '2.0', id, error: { code: -32602, message: 'invalid filter' } };
        const { blockHash, fromBlock, toBlock } = filter.data;
        if (blockHash !== undefined) {
          const b = this.byHash.get(blockHash);
          return b === undefined
            ? { jsonrpc: '2.0', id, error: { code: -32000, message: 'unknown block' } }
            : ok(this.logsOf(b).map((l) => this.rpcLog(l)));
        }
        const from = this.blockAt(fromBlock ?? 'latest')?.number ?? this.tip.number + 1;
        const to = this.blockAt(toBlock ?? 'latest')?.number ?? this.tip.number;
        return ok(this.canonical.slice(from, to + 1).flatMap((b) => this.logsOf(b).map((l) => this.rpcLog(l))));
      }
      case 'eth_subscribe': {
        if (socket === undefined || params[0] !== 'newHeads')
          return { jsonrpc: '2.0', id, error: { code: -32601, message: 'only newHeads over WebSocket' } };
        const sub = hex(this.nextSub++);
        this.subscriptions.get(socket)?.add(sub);
        return ok(sub);
      }
      case 'eth_unsubscribe':
        return ok(socket !== undefined && this.subscriptions.get(socket)?.delete(String(params[0])) === true);
      default:
        return { jsonrpc: '2.0', id, error: { code: -32601, message: `method ${method} not found` } };
    }
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () =>
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.answer(Buffer.concat(chunks).toString('utf8')))),
      );
    });
    server.on('connection', (s) => {
      this.raw.add(s);
      s.once('close', () => this.raw.delete(s));
    });
    const wss = new WebSocketServer({ server });
    wss.on('connection', (socket) => {
      this.sockets.add(socket);
      this.subscriptions.set(socket, new Set());
      socket.on('message', (data: RawData) => {
        const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
        socket.send(JSON.stringify(this.answer(text, socket)));
      });
      socket.on('close', () => {
        this.sockets.delete(socket);
        this.subscriptions.delete(socket);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    this.httpUrl = `http://127.0.0.1:${port}`;
    this.wsUrl = `ws://127.0.0.1:${port}`;
    this.closeServer = async () => {
      for (const s of this.sockets) s.terminate();
      for (const s of this.raw) s.destroy();
      wss.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    };
  }

  close(): Promise<void> {
    return this.closeServer();
  }
}
