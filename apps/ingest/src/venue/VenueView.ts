import type { VenueKind } from './venueSchemas.js';

/** One venue as the operations snapshot shows it, on the worker that holds it. */
export interface VenueView {
  readonly venue: string;
  /** Each MQTT session: its id, the symbols the venue confirmed on it, whether it is connected. */
  readonly sessions: readonly { readonly id: string; readonly symbols: number; readonly connected: boolean }[];
  readonly wanted: number;
  /** Wanted symbols covered by any declared kind. */
  readonly covered: number;
  /** Per declared kind. */
  readonly byKind: Partial<Record<VenueKind, number>>;
}
