import { z } from 'zod';

/** The venue's symbol grammar; anything else cannot be subscribed or named in a topic. */
export const venueSymbolSchema = z.string().regex(/^[A-Z0-9]{1,12}(-[A-Z0-9]{1,8})?$/);

export const venueKindSchema = z.enum(['snapshot', 'quote', 'tick']);
export type VenueKind = z.infer<typeof venueKindSchema>;
export const venueKinds: readonly VenueKind[] = venueKindSchema.options;

/** The HTTP API names kinds as upper-case `sub_types`; the topics use the lower-case kind. */
export type VenueSubType = 'SNAPSHOT' | 'QUOTE' | 'TICK';
export function subTypeOf(kind: VenueKind): VenueSubType {
  switch (kind) {
    case 'snapshot':
      return 'SNAPSHOT';
    case 'quote':
      return 'QUOTE';
    case 'tick':
      return 'TICK';
  }
}

/** The only 2xx body the venue sends; a 200 with anything else is not an acknowledgement. */
export const venueOkSchema = z.object({ ok: z.literal(true) });

/**
 * The venue's refusals, discriminated by `code`. `symbols` and `limit` are required: an
 * INVALID_SYMBOL that does not say which symbols, or a ceiling without its number, cannot be
 * acted on, so it is treated as an unreadable answer rather than guessed at.
 */
export const venueRefusalSchema = z.discriminatedUnion('code', [
  z.object({ code: z.literal('INVALID_APP_KEY'), message: z.string().optional() }),
  z.object({ code: z.literal('INVALID_PARAMETER'), message: z.string().optional() }),
  z.object({ code: z.literal('INVALID_SESSION'), message: z.string().optional() }),
  z.object({ code: z.literal('INVALID_SYMBOL'), symbols: z.array(z.string()), message: z.string().optional() }),
  z.object({ code: z.literal('TOO_MANY_SYMBOLS_SUBSCRIPTION'), limit: z.number().int().nonnegative(), message: z.string().optional() }),
  z.object({ code: z.literal('TOO_MANY_REQUESTS'), message: z.string().optional() }),
  z.object({ code: z.literal('INTERNAL'), message: z.string().optional() }),
]);
export const venueRefusalCodes: ReadonlySet<string> = new Set(venueRefusalSchema.options.map((o) => o.shape.code.value));

const price = z.number();
const common = { symbol: venueSymbolSchema, seq: z.number().int().nonnegative(), ts: z.number().int().nonnegative() };

/**
 * One streamed message. Loose objects: fields the venue adds later are carried through to the
 * writer rather than silently dropped; the ones named here are the ones we rely on.
 */
export const venuePayloadSchema = z.discriminatedUnion('kind', [
  z.looseObject({ ...common, kind: z.literal('snapshot'), price }),
  z.looseObject({ ...common, kind: z.literal('quote'), bid: price, ask: price }),
  z.looseObject({ ...common, kind: z.literal('tick'), price, size: z.number().nonnegative() }),
]);
export type VenuePayload = z.infer<typeof venuePayloadSchema>;

const topicPattern = /^([a-z]+)\/(.+)$/;

/** Splits `<kind>/<symbol>`; undefined when the topic is not one the venue publishes on. */
export function parseVenueTopic(topic: string): { kind: VenueKind; symbol: string } | undefined {
  const match = topicPattern.exec(topic);
  if (match === null) return undefined;
  const kind = venueKindSchema.safeParse(match[1]);
  const symbol = venueSymbolSchema.safeParse(match[2]);
  return kind.success && symbol.success ? { kind: kind.data, symbol: symbol.data } : undefined;
}

export type PayloadParse = { ok: true; payload: VenuePayload } | { ok: false; why: string };

/**
 * A PUBLISH as the venue should have sent it: topic and body must name the same (kind, symbol),
 * because the writer keys on the body while the venue routes on the topic — a disagreement means
 * one of them is wrong and we cannot tell which.
 */
export function parseVenuePublish(topic: string, body: string): PayloadParse {
  const route = parseVenueTopic(topic);
  if (route === undefined) return { ok: false, why: 'topic is not <kind>/<symbol>' };
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return { ok: false, why: `payload is not JSON: ${body.slice(0, 80)}` };
  }
  const parsed = venuePayloadSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      why: `payload shape: ${issue === undefined ? 'invalid' : `${issue.path.join('.') || '(root)'}: ${issue.message}`}`,
    };
  }
  if (parsed.data.kind !== route.kind || parsed.data.symbol !== route.symbol) {
    return { ok: false, why: `topic ${topic} disagrees with payload ${parsed.data.kind}/${parsed.data.symbol}` };
  }
  return { ok: true, payload: parsed.data };
}
