import type { StandardSchemaV1 } from '@standard-schema/spec';
import { type } from 'arktype';
import * as v from 'valibot';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { z as z3 } from 'zod/v3';
import { defineStream } from '@streamgate/protocol';
import type { StreamRef } from '@streamgate/protocol';
import { encodePayload } from './encodePayload.js';

type Order = { orderId: string; status: string; items: Array<{ sku: string }> };

// The same payload schema in each library; the publisher only sees its Standard Schema side.
const streams = {
  'zod 4': defineStream('orders', z.object({ orderId: z.string(), status: z.string(), items: z.array(z.object({ sku: z.string() })) })),
  'zod 3 API (zod/v3)': defineStream(
    'orders',
    z3.object({ orderId: z3.string(), status: z3.string(), items: z3.array(z3.object({ sku: z3.string() })) }),
  ),
  valibot: defineStream('orders', v.object({ orderId: v.string(), status: v.string(), items: v.array(v.object({ sku: v.string() })) })),
  arktype: defineStream('orders', type({ orderId: 'string', status: 'string', items: type({ sku: 'string' }).array() })),
};

describe.each(Object.entries(streams))('encodePayload with a %s stream schema', (_library, definition) => {
  const stream: StreamRef<Order> = definition.for('o-1');

  it('encodes a valid payload as the entry data', async () => {
    expect(await encodePayload(stream, { orderId: 'o-1', status: 'paid', items: [{ sku: 'a' }] })).toEqual({
      ok: true,
      text: '{"orderId":"o-1","status":"paid","items":[{"sku":"a"}]}',
    });
  });

  it('refuses an invalid one, naming the field by its path', async () => {
    const bad = { orderId: 'o-1', status: 'paid', items: [{ sku: 7 }] } as unknown as Order;
    const result = await encodePayload(stream, bad);
    expect(result).toMatchObject({ ok: false, error: { code: 'payload_invalid', retryable: false, field: 'payload.items.0.sku' } });
    if (!result.ok) expect(result.error.message).toMatch(/^payload\.items\.0\.sku: .+ \(stream orders:o-1\)$/);
  });
});

describe('defineStream with a Standard Schema', () => {
  it("types the stream's payload as the schema's output", () => {
    expectTypeOf(streams['zod 4']).toEqualTypeOf(defineStream<Order>('orders'));
    expectTypeOf(streams['zod 3 API (zod/v3)']).toEqualTypeOf(defineStream<Order>('orders'));
    expectTypeOf(streams.valibot).toEqualTypeOf(defineStream<Order>('orders'));
    expectTypeOf(streams.arktype).toEqualTypeOf(defineStream<Order>('orders'));
    const withDefault = defineStream('counts', v.object({ n: v.optional(v.number(), 0) }));
    expectTypeOf(withDefault.for('x')).toEqualTypeOf<StreamRef<{ n: number }>>();
  });
});

describe('encodePayload with schemas beyond the common case', () => {
  it("encodes the schema's output, not the raw payload", async () => {
    const stream = defineStream('counts', v.object({ n: v.optional(v.number(), 0) })).for('x');
    expect(await encodePayload(stream, {} as { n: number })).toEqual({ ok: true, text: '{"n":0}' });
  });

  it('awaits a schema that validates asynchronously', async () => {
    const asyncSchema: StandardSchemaV1<unknown, { id: string }> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: (value) =>
          Promise.resolve(
            typeof value === 'object' && value !== null && 'id' in value && typeof value.id === 'string'
              ? { value: { id: value.id } }
              : { issues: [{ message: 'id must be a string', path: [{ key: 'id' }] }] },
          ),
      },
    };
    const stream = defineStream('jobs', asyncSchema).for('j');
    expect(await encodePayload(stream, { id: 'a' })).toEqual({ ok: true, text: '{"id":"a"}' });
    expect(await encodePayload(stream, { id: 1 } as unknown as { id: string })).toMatchObject({
      ok: false,
      error: { code: 'payload_invalid', field: 'payload.id', message: 'payload.id: id must be a string (stream jobs:j)' },
    });
  });

  it('turns a schema that throws into payload_invalid, not a rejected publish', async () => {
    const throwing: StandardSchemaV1<unknown, number> = {
      '~standard': {
        version: 1,
        vendor: 'test',
        validate: () => {
          throw new Error('boom');
        },
      },
    };
    const result = await encodePayload(defineStream('n', throwing).for('1'), 1);
    expect(result).toMatchObject({ ok: false, error: { code: 'payload_invalid', field: 'payload' } });
    if (!result.ok) expect(result.error.message).toContain('boom');
  });
});
