import * as v from 'valibot';

export const priceRequest = v.object({ pair: v.pipe(v.string(), v.regex(/^[A-Z]+[- ][A-Z]+$/)) });
export const priceTick = v.object({ pair: v.string(), price: v.number() });
export type PriceTick = v.InferOutput<typeof priceTick>;
