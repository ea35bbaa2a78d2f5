import type { RevocationRecord } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';

/** What a revocation is matched against: a token's claims, or a subscription holding one. */
export interface RevocableToken {
  readonly sub: string;
  readonly stream: string;
  readonly iat: number;
}

/**
 * The revocations in force on this relay (docs/protocol.md §10, "Revocation"), by subject, by
 * stream and by both. Each key keeps only its latest cutoff (`before`): a later revocation
 * covers every token an earlier one did. A record is dropped once its `exp` plus the clock skew
 * has passed, when no token it matches can still be accepted, so memory is bounded by the
 * revocations of one token lifetime.
 */
export class RevocationList {
  private readonly bySubject = new Map<string, Cutoff>();
  private readonly byStream = new Map<string, Cutoff>();
  private readonly byPair = new Map<string, Cutoff>();
  private nextPruneAt = 0;

  constructor(
    private readonly clock: Clock,
    private readonly skewMs: number,
  ) {}

  /** The records in force: what metrics and the operations snapshot report as held. */
  get size(): number {
    this.dropExpired(this.clock.now());
    return this.bySubject.size + this.byStream.size + this.byPair.size;
  }

  /** Adds a record; false when it changes nothing (already known, or expired). */
  add(record: RevocationRecord): boolean {
    const now = this.clock.now();
    this.prune(now);
    if (record.exp + this.skewMs <= now) return false;
    const map = record.sub === undefined ? this.byStream : record.stream === undefined ? this.bySubject : this.byPair;
    const key =
      record.sub === undefined ? (record.stream ?? '') : record.stream === undefined ? record.sub : pairKey(record.sub, record.stream);
    const held = map.get(key);
    if (held !== undefined && held.before >= record.before && held.exp >= record.exp) return false;
    map.set(key, { before: Math.max(record.before, held?.before ?? 0), exp: Math.max(record.exp, held?.exp ?? 0) });
    return true;
  }

  /** True when a revocation in force covers this token (issued before its cutoff). */
  refuses(token: RevocableToken): boolean {
    const now = this.clock.now();
    return (
      covers(this.bySubject.get(token.sub), token.iat, now, this.skewMs) ||
      covers(this.byStream.get(token.stream), token.iat, now, this.skewMs) ||
      covers(this.byPair.get(pairKey(token.sub, token.stream)), token.iat, now, this.skewMs)
    );
  }

  /** True when `record` covers this token: the test for ending a live subscription. */
  static matches(record: RevocationRecord, token: RevocableToken): boolean {
    if (record.sub !== undefined && record.sub !== token.sub) return false;
    if (record.stream !== undefined && record.stream !== token.stream) return false;
    return token.iat < record.before;
  }

  private prune(now: number): void {
    if (now < this.nextPruneAt) return;
    // At most once a minute on adds: records live for a token lifetime, so a late drop costs
    // little memory; a count (a scrape, a snapshot) drops at once, so it never reports a lapsed one.
    this.dropExpired(now);
  }

  private dropExpired(now: number): void {
    this.nextPruneAt = now + 60_000;
    for (const map of [this.bySubject, this.byStream, this.byPair]) {
      for (const [key, cutoff] of map) if (cutoff.exp + this.skewMs <= now) map.delete(key);
    }
  }
}

interface Cutoff {
  readonly before: number;
  readonly exp: number;
}

function covers(cutoff: Cutoff | undefined, iat: number, now: number, skewMs: number): boolean {
  return cutoff !== undefined && cutoff.exp + skewMs > now && iat < cutoff.before;
}

function pairKey(sub: string, stream: string): string {
  // A stream name never holds a newline, so the pair key cannot collide with another pair.
  return `${stream}\n${sub}`;
}
