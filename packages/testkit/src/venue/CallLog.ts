import type { VenueKind } from './venueKinds.js';

/**
 * One market-data HTTP call as the venue saw it, refused ones included. Fields the body did not
 * supply in a usable form stay undefined / empty; `status`, `code` and `answeredAt` appear once the
 * answer has been written (a delayed call is listed from its arrival).
 */
export interface VenueSimCall {
  op: 'subscribe' | 'unsubscribe';
  appKey?: string;
  sessionId?: string;
  symbols: string[];
  kinds: VenueKind[];
  receivedAt: number;
  answeredAt?: number;
  status?: number;
  /** The `code` of the answer's body; absent on a 200. */
  code?: string;
}

/** Every market-data call in arrival order. */
export class CallLog {
  private entries: VenueSimCall[] = [];

  open(op: VenueSimCall['op'], receivedAt: number): VenueSimCall {
    const call: VenueSimCall = { op, symbols: [], kinds: [], receivedAt };
    this.entries.push(call);
    return call;
  }

  /** Copies, so a test holding the list does not see later answers rewrite it. */
  list(): VenueSimCall[] {
    return this.entries.map((call) => ({ ...call, symbols: [...call.symbols], kinds: [...call.kinds] }));
  }

  /** Forgets every call received so far, including ones still being answered. */
  clear(): void {
    this.entries = [];
  }
}
