// Runs the router through createCallerFactory and checks the token against docs/protocol.md §10,
// the way a relay written from that document would read it. Exits non-zero on any mismatch.
import type { inferRouterInputs, inferRouterOutputs } from '@trpc/server';
import type { InferRelayPayload, RelaySubscription } from '@streamgate/server';
import { checkRelayToken } from './checkRelayToken.js';
import { AUDIENCE, createCaller, ISSUER, keys, prices, publisher } from './router.js';
import type { AppRouter } from './router.js';
import type { PriceTick } from './schemas.js';

type Equal<A, B> = (<G>() => G extends A ? 1 : 2) extends <G>() => G extends B ? 1 : 2 ? true : false;
type Output = inferRouterOutputs<AppRouter>['prices']['token'];
// The payload type travels from the schema through the router type, end to end.
const payloadInferred: Equal<InferRelayPayload<Output>, PriceTick> = true;
const outputInferred: Equal<Output, RelaySubscription<PriceTick>> = true;
const inputInferred: Equal<inferRouterInputs<AppRouter>['prices']['token'], { pair: string }> = true;

function expectEqual(what: string, actual: unknown, expected: unknown): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  }
}

async function refusal(call: () => Promise<unknown>): Promise<{ code: unknown; message: unknown }> {
  try {
    await call();
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown };
    return { code: e.code, message: e.message };
  }
  throw new Error('the call was expected to be refused');
}

const alice = createCaller({ user: 'alice' });
const before = Math.floor(Date.now() / 1000);
const sub = await alice.prices.token({ pair: 'ETH-USD' });
const claims = await checkRelayToken(sub, {
  keys,
  issuer: ISSUER,
  audience: AUDIENCE,
  subject: 'alice',
  stream: 'prices:ETH-USD',
  redis: 'redis://streams.internal:6379/0',
  ttlSeconds: 120,
  issuedNotBefore: before,
});

expectEqual('no session', await refusal(() => createCaller({ user: null }).prices.token({ pair: 'ETH-USD' })), {
  code: 'UNAUTHORIZED',
  message: 'sign in first',
});
expectEqual('denied', await refusal(() => alice.prices.token({ pair: 'ETH-EUR' })), { code: 'FORBIDDEN', message: 'USD pairs only' });
// @ts-expect-error the procedure's input is { pair: string }, from the schema
const badInput = await refusal(() => alice.prices.token({ pair: 7 }));
expectEqual('input the schema refuses', badInput.code, 'BAD_REQUEST');
// A pair the schema allows but that makes no valid stream name is still the caller's mistake.
const badName = await refusal(() => alice.prices.token({ pair: 'ETH USD' }));
expectEqual('stream name', [badName.code, String(badName.message).startsWith('stream name: ')], ['BAD_REQUEST', true]);

// @ts-expect-error price is a number in the stream's schema: the payload type comes from it
const refused = await publisher.publish(prices.for('ETH-USD'), { pair: 'ETH-USD', price: 'high' });
expectEqual('publish of a payload the schema refuses', refused.ok ? 'ok' : [refused.error.code, refused.error.retryable], [
  'payload_invalid',
  false,
]);
if (!refused.ok && refused.error.code === 'payload_invalid') expectEqual('refused field', refused.error.field, 'payload.price');
await publisher.close();

if (!payloadInferred || !outputInferred || !inputInferred) throw new Error('unreachable: the type checks are compile-time');
process.stdout.write(
  `token ok: ${JSON.stringify({ sub: claims.sub, stream: claims.stream, redis: claims.redis, ttl: claims.exp - claims.iat })}\n`,
);
