import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import type { RawData } from 'ws';

/**
 * What the proxy does to traffic from the upstream towards its clients.
 * - pass: forward everything.
 * - stall: keep every socket open and answer nothing (a silent upstream).
 * - lag: deliver each upstream frame `lagMs` late, in order.
 * - garbage: answer every request and push with text that is not JSON-RPC.
 * - down: cut every socket and refuse new ones (HTTP answers 503).
 */
export type FaultMode = 'pass' | 'stall' | 'lag' | 'garbage' | 'down';

/** How a provider words its refusal of an eth_getLogs range (code and message, `{max}` = the limit). */
export interface RangeRefusalReply {
  readonly code: number;
  readonly message: string;
}

export const RANGE_REFUSALS = {
  infura: { code: -32005, message: 'query returned more than 10000 results' },
  tooLarge: { code: -32602, message: 'block range too large' },
  maxRange: { code: -32000, message: 'exceed maximum block range: {max}' },
} satisfies Record<string, RangeRefusalReply>;

export interface FaultProxy extends AsyncDisposable {
  readonly port: number;
  readonly httpUrl: string;
  readonly wsUrl: string;
  /** eth_subscribe calls forwarded so far, by their first parameter (newHeads, logs…). */
  readonly subscribeCalls: Map<string, number>;
  /** HTTP JSON-RPC calls forwarded so far, by method. */
  readonly httpCalls: Map<string, number>;
  readonly openSockets: number;
  /** `only` limits the fault to WebSocket or HTTP traffic; the other keeps its current mode. */
  setMode(mode: FaultMode, options?: { lagMs?: number; only?: 'ws' | 'http' }): void;
  /**
   * HTTP eth_getLogs queries spanning more than `maxBlocks` blocks (fromBlock..toBlock) are
   * answered with `reply` as a JSON-RPC error instead of being forwarded; null lifts the fault.
   */
  refuseLogRanges(maxBlocks: number | null, reply?: RangeRefusalReply): void;
  /** eth_getLogs range queries refused so far, and the widths of those forwarded. */
  readonly refusedLogRanges: number;
  readonly forwardedLogRangeWidths: readonly number[];
  /** Closes every client WebSocket abruptly (the proxy keeps accepting new ones). */
  cut(): void;
  close(): Promise<void>;
}

function count(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** The block span of a single eth_getLogs range request, or null for anything else. */
function logRangeOf(text: string): { id: unknown; width: number } | null {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    const req = parsed as { id?: unknown; method?: unknown; params?: unknown };
    if (req.method !== 'eth_getLogs' || !Array.isArray(req.params)) return null;
    const filter: unknown = req.params[0];
    if (typeof filter !== 'object' || filter === null) return null;
    const { fromBlock, toBlock } = filter as { fromBlock?: unknown; toBlock?: unknown };
    if (typeof fromBlock !== 'string' || typeof toBlock !== 'string' || !fromBlock.startsWith('0x') || !toBlock.startsWith('0x'))
      return null;
    return { id: req.id ?? null, width: Number.parseInt(toBlock, 16) - Number.parseInt(fromBlock, 16) + 1 };
  } catch {
    return null;
  }
}

function methodsOf(text: string): { method: string; first: unknown }[] {
  try {
    const parsed: unknown = JSON.parse(text);
    const list = Array.isArray(parsed) ? (parsed as unknown[]) : [parsed];
    return list.flatMap((m) =>
      typeof m === 'object' && m !== null && typeof (m as { method?: unknown }).method === 'string'
        ? [{ method: (m as { method: string }).method, first: ((m as { params?: unknown[] }).params ?? [])[0] }]
        : [],
    );
  } catch {
    return [];
  }
}

/**
 * A JSON-RPC-aware proxy in front of one node (anvil) that tests own: HTTP POSTs and WebSocket
 * sessions are forwarded, and a test switches faults on and off while traffic flows.
 */
export async function startFaultProxy(target: { httpUrl: string; wsUrl: string }): Promise<FaultProxy> {
  let mode: FaultMode = 'pass';
  let httpMode: FaultMode = 'pass';
  let lagMs = 0;
  const subscribeCalls = new Map<string, number>();
  const httpCalls = new Map<string, number>();
  const clients = new Set<WebSocket>();
  const rawSockets = new Set<Socket>();
  let refuseAbove: number | null = null;
  let refusal: RangeRefusalReply = RANGE_REFUSALS.infura;
  let refusedLogRanges = 0;
  const forwardedLogRangeWidths: number[] = [];

  const onHttp = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      for (const m of methodsOf(body)) count(httpCalls, m.method);
      const current = httpMode;
      if (current === 'down') {
        res.writeHead(503).end('proxy down');
        return;
      }
      if (current === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('<html>not json-rpc</html>');
        return;
      }
      if (current === 'stall') return; // never answered; the client's timeout must catch it
      const range = logRangeOf(body);
      if (range !== null && refuseAbove !== null && range.width > refuseAbove) {
        refusedLogRanges += 1;
        const error = { code: refusal.code, message: refusal.message.replace('{max}', String(refuseAbove)) };
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: range.id, error }));
        return;
      }
      if (range !== null) forwardedLogRangeWidths.push(range.width);
      const forward = async () => {
        if (current === 'lag') await new Promise((r) => setTimeout(r, lagMs));
        const upstream = await fetch(target.httpUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        res.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
      };
      forward().catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(502).end(String(error));
      });
    });
  };

  const server = createServer(onHttp);
  server.on('connection', (socket) => {
    rawSockets.add(socket);
    socket.once('close', () => rawSockets.delete(socket));
  });
  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (mode === 'down') {
      socket.destroy();
      return;
    }
    wss.handleUpgrade(req, socket, head, (client) => {
      clients.add(client);
      const upstream = new WebSocket(target.wsUrl);
      const pending: string[] = [];
      let lagChain = Promise.resolve();
      const toClient = (data: RawData) => {
        const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
        switch (mode) {
          case 'pass':
            client.send(text);
            return;
          case 'stall':
          case 'down':
            return;
          case 'garbage':
            client.send('{"jsonrpc":"2.0","garbage":');
            return;
          case 'lag': {
            const delay = lagMs;
            lagChain = lagChain.then(
              () =>
                new Promise<void>((resolve) =>
                  setTimeout(() => {
                    if (client.readyState === WebSocket.OPEN) client.send(text);
                    resolve();
                  }, delay),
                ),
            );
            return;
          }
        }
      };
      upstream.on('message', toClient);
      upstream.on('open', () => {
        for (const text of pending.splice(0)) upstream.send(text);
      });
      client.on('message', (data: RawData) => {
        const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
        for (const m of methodsOf(text)) if (m.method === 'eth_subscribe') count(subscribeCalls, String(m.first));
        if (upstream.readyState === WebSocket.OPEN) upstream.send(text);
        else pending.push(text);
      });
      const closeBoth = () => {
        clients.delete(client);
        client.terminate();
        upstream.terminate();
      };
      client.on('close', closeBoth);
      client.on('error', closeBoth);
      upstream.on('close', closeBoth);
      upstream.on('error', closeBoth);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const cut = () => {
    for (const client of clients) client.terminate();
    clients.clear();
  };
  const close = async () => {
    cut();
    for (const socket of rawSockets) socket.destroy();
    wss.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    port,
    httpUrl: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    subscribeCalls,
    httpCalls,
    get openSockets() {
      return clients.size;
    },
    refuseLogRanges(maxBlocks, reply = RANGE_REFUSALS.infura) {
      refuseAbove = maxBlocks;
      refusal = reply;
    },
    get refusedLogRanges() {
      return refusedLogRanges;
    },
    forwardedLogRangeWidths,
    setMode(next, opts = {}) {
      if (opts.only !== 'http') mode = next;
      if (opts.only !== 'ws') httpMode = next;
      lagMs = opts.lagMs ?? lagMs;
      if (next === 'down' && opts.only !== 'http') cut();
    },
    cut,
    close,
    [Symbol.asyncDispose]: close,
  };
}
