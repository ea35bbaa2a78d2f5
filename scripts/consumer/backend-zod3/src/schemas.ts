import { z } from 'zod';

export const priceRequest = z.object({ pair: z.string().regex(/^[A-Z]+[- ][A-Z]+$/) });
export const priceTick = z.object({ pair: z.string(), price: z.number() });
export type PriceTick = z.output<typeof priceTick>;
