import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { CallLog, VenueSimCall } from './CallLog.js';
import { parseFault } from './parseFault.js';
import type { VenueSimFault } from './parseFault.js';
import { parseMarketDataRequest } from './parseMarketDataRequest.js';
import type { MarketDataRequest } from './parseMarketDataRequest.js';
import { readJsonBody } from './readJsonBody.js';
import { isLive, SessionRegistry } from './SessionRegistry.js';
import type { VenueState } from './VenueState.js';

export interface VenueHttpDeps {
  appKeys: ReadonlySet<string>;
  state: VenueState;
  registry: SessionRegistry;
  calls: CallLog;
  /** Applies a fault posted to /sim/faults; what it returns is merged into the 200 body. */
  applyFault: (fault: VenueSimFault) => Record<string, unknown>;
  /** Aborted when the venue closes, so delayed answers stop waiting. */
  signal: AbortSignal;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const OPS: Readonly<Record<string, VenueSimCall['op']>> = {
  '/v1/market-data/subscribe': 'subscribe',
  '/v1/market-data/unsubscribe': 'unsubscribe',
};

const invalidParameter = (message: string): Answer => ({ status: 400, body: { code: 'INVALID_PARAMETER', message } });

function send(res: ServerResponse, answer: Answer): void {
  res.writeHead(answer.status, { 'content-type': 'application/json' }).end(JSON.stringify(answer.body));
}

/** The venue's rules for one well-formed call from a known key, in the order the venue checks them. */
function decide(deps: VenueHttpDeps, op: VenueSimCall['op'], appKey: string, request: MarketDataRequest): Answer {
  const session = deps.registry.find(appKey, request.sessionId);
  if (session === undefined || !isLive(session.client)) {
    return { status: 400, body: { code: 'INVALID_SESSION' } };
  }
  if (op === 'unsubscribe') {
    // Unknown symbols are ignored here: dropping something never held is not an error.
    SessionRegistry.unsubscribe(session, request.symbols, request.kinds);
    return { status: 200, body: { ok: true } };
  }
  const unknown = [...new Set(request.symbols.filter((symbol) => !deps.state.lists(symbol)))];
  if (unknown.length > 0) return { status: 400, body: { code: 'INVALID_SYMBOL', symbols: unknown } };
  const limit = deps.state.symbolCeiling;
  if (SessionRegistry.symbolCountWith(session, request.symbols) > limit) {
    return { status: 400, body: { code: 'TOO_MANY_SYMBOLS_SUBSCRIPTION', limit: deps.state.statedCeiling } };
  }
  SessionRegistry.subscribe(session, request.symbols, request.kinds);
  session.silenced = false;
  return { status: 200, body: { ok: true } };
}

async function marketData(deps: VenueHttpDeps, op: VenueSimCall['op'], req: IncomingMessage, res: ServerResponse): Promise<void> {
  const call = deps.calls.open(op, Date.now());
  // The delay in force when the call arrived; the venue acts at the end of it, as a slow venue does.
  const delay = deps.state.responseDelayMs(op);
  const header = req.headers['x-app-key'];
  const appKey = typeof header === 'string' && header.length > 0 ? header : undefined;
  if (appKey !== undefined) call.appKey = appKey;

  const body = await readJsonBody(req);
  const parsed = body.ok ? parseMarketDataRequest(body.value, op) : undefined;
  const known = parsed === undefined ? {} : parsed.ok ? parsed.request : parsed.partial;
  if (known.sessionId !== undefined) call.sessionId = known.sessionId;
  call.symbols = [...(known.symbols ?? [])];
  call.kinds = [...(known.kinds ?? [])];

  if (delay > 0) await sleep(delay, undefined, { signal: deps.signal });

  let answer: Answer;
  const failure = deps.state.takeFailure();
  if (failure !== undefined) answer = { status: failure, body: { code: 'INTERNAL' } };
  else if (appKey === undefined || !deps.appKeys.has(appKey)) answer = { status: 401, body: { code: 'INVALID_APP_KEY' } };
  else if (!deps.state.admit(appKey)) answer = { status: 429, body: { code: 'TOO_MANY_REQUESTS' } };
  else if (!body.ok) answer = invalidParameter(body.message);
  else if (parsed?.ok !== true) answer = invalidParameter(parsed === undefined ? 'body' : `${parsed.field}: ${parsed.message}`);
  else answer = decide(deps, op, appKey, parsed.request);

  send(res, answer);
  call.answeredAt = Date.now();
  call.status = answer.status;
  if (typeof answer.body.code === 'string') call.code = answer.body.code;
}

async function fault(deps: VenueHttpDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readJsonBody(req);
  if (!body.ok) {
    send(res, { status: 400, body: { code: 'INVALID_PARAMETER', field: 'body', message: body.message } });
    return;
  }
  const parsed = parseFault(body.value);
  if (!parsed.ok) {
    send(res, { status: 400, body: { code: 'INVALID_PARAMETER', field: parsed.field, message: parsed.message } });
    return;
  }
  send(res, { status: 200, body: { ok: true, ...deps.applyFault(parsed.fault) } });
}

/**
 * The venue's HTTP side: subscribe / unsubscribe under `/v1/market-data/`, recorded in the call
 * log whatever their answer, and `POST /sim/faults`, the test's control channel, which needs no
 * app key, is never delayed or failed, and is not logged as a venue call.
 */
export function createVenueHttpHandler(deps: VenueHttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://venue').pathname;
    const op = Object.hasOwn(OPS, path) ? OPS[path] : undefined;
    let work: Promise<void>;
    if (req.method === 'POST' && op !== undefined) work = marketData(deps, op, req, res);
    else if (req.method === 'POST' && path === '/sim/faults') work = fault(deps, req, res);
    else {
      req.resume();
      send(res, { status: 404, body: { code: 'NOT_FOUND', message: `no ${req.method ?? ''} ${path} here` } });
      return;
    }
    work.catch((error: unknown) => {
      // A client that hung up mid-body, or the venue closing under a delayed answer: nobody is
      // left to answer, so the socket goes. Anything else is a simulator bug and says so.
      if (req.destroyed || deps.signal.aborted) {
        res.destroy();
        return;
      }
      const message = error instanceof Error ? error.message : String(error);
      if (res.headersSent) res.destroy(error instanceof Error ? error : new Error(message));
      else send(res, { status: 500, body: { code: 'SIM_ERROR', message } });
    });
  };
}
