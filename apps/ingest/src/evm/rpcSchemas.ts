import { z } from 'zod';

const hex = z.string().regex(/^0x[0-9a-fA-F]*$/);
const quantity = hex.transform((v) => Number.parseInt(v, 16));

/** The header fields continuity depends on; everything else is passed through untouched. */
export const blockHeaderSchema = z.object({ number: quantity, hash: hex, parentHash: hex, timestamp: quantity }).passthrough();
export type BlockHeader = z.infer<typeof blockHeaderSchema>;

export const rpcLogSchema = z.object({
  address: hex,
  topics: z.array(hex),
  data: hex,
  blockNumber: quantity,
  blockHash: hex,
  transactionHash: hex,
  transactionIndex: quantity,
  logIndex: quantity,
});
export type RpcLog = z.infer<typeof rpcLogSchema>;

export const rpcResponseSchema = z.union([
  z.object({ jsonrpc: z.literal('2.0'), id: z.union([z.number(), z.string()]), result: z.unknown() }),
  z.object({
    jsonrpc: z.literal('2.0'),
    id: z.union([z.number(), z.string(), z.null()]),
    error: z.object({ code: z.number(), message: z.string() }),
  }),
]);

export const subscriptionNotificationSchema = z.object({
  jsonrpc: z.literal('2.0'),
  method: z.literal('eth_subscription'),
  params: z.object({ subscription: z.string(), result: z.unknown() }),
});

export const quantitySchema = quantity;
