/** The three streams the venue publishes per symbol; the HTTP API names them by sub_type. */
export type VenueKind = 'snapshot' | 'quote' | 'tick';

export const VENUE_KINDS: readonly VenueKind[] = ['snapshot', 'quote', 'tick'];

const KIND_BY_SUB_TYPE: Readonly<Record<string, VenueKind>> = { SNAPSHOT: 'snapshot', QUOTE: 'quote', TICK: 'tick' };

/** `SNAPSHOT` → `snapshot`; undefined for anything the venue does not know. */
export function kindOfSubType(subType: string): VenueKind | undefined {
  return Object.hasOwn(KIND_BY_SUB_TYPE, subType) ? KIND_BY_SUB_TYPE[subType] : undefined;
}

/** A symbol the venue can list at all; whether it does is setUnknownSymbols' business. */
export const VENUE_SYMBOL_PATTERN = /^[A-Z0-9]{1,12}(-[A-Z0-9]{1,8})?$/;
