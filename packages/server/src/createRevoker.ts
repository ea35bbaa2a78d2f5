import { z } from 'zod';
import { REVOCATIONS_CHANNEL, REVOCATIONS_KEY, streamNameSchema } from '@streamgate/protocol';
import type { RevocationRecord } from '@streamgate/protocol';
import { openRedis } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { MAX_TOKEN_TTL_SECONDS } from './createTokenIssuer.js';
import { integerOption } from './integerOption.js';
import { normalizeTargetList } from './PublisherTargets.js';
import { timeoutAfter } from './timeoutAfter.js';

/** What to revoke: every token of a subject, every token for a stream, or a subject's tokens for a stream. */
export type RevokeSpec = { subject: string; stream?: string } | { stream: string; subject?: string };

export type RevokeError =
  | { code: 'revoke_invalid'; retryable: false; message: string }
  /**
   * Some targets did not confirm it in time; the others recorded it. Call again: a repeated
   * revocation is harmless. One not confirmed may still be recorded when its target answers (the
   * command stays queued on the connection), so it is never less than asked for.
   */
  | { code: 'revoke_failed'; retryable: true; message: string; failedTargets: string[] }
  /** `close()` was called: nothing is sent. */
  | { code: 'closed'; retryable: false; message: string };

export type RevokeResult = { ok: true; before: number; expiresAt: number } | { ok: false; error: RevokeError };

export interface RevokerOptions {
  /** Every Redis target tokens may name (the issuer's list): relays read revocations from each. */
  readonly targets: string | readonly string[];
  readonly username?: string;
  readonly password?: string;
  /** The longest lifetime of any token issued (default: the issuer's maximum, 24 h). */
  readonly maxTokenLifetimeSeconds?: number;
  /** The relays' RELAY_CLOCK_SKEW_SECONDS (default 30). */
  readonly clockSkewSeconds?: number;
  readonly now?: () => number;
  /** How long one target may take to record it before it counts as failed (default 5 000 ms). */
  readonly timeoutMs?: number;
}

export interface Revoker {
  /**
   * Records a revocation on every target. Resolves once it is in force: every token issued
   * before is refused (relays end the subscriptions holding one within 1 s), and a token issued
   * after this resolves is accepted.
   */
  revoke(spec: RevokeSpec): Promise<RevokeResult>;
  close(): Promise<void>;
}

const specSchema = z
  .object({ subject: z.string().min(1).max(256).optional(), stream: z.string().optional() })
  .strict()
  .refine((s) => s.subject !== undefined || s.stream !== undefined, { message: 'name a subject, a stream, or both' })
  .refine((s) => s.stream === undefined || streamNameSchema.safeParse(s.stream).success, {
    message: 'stream is not a stream name',
    path: ['stream'],
  });

/** Revocation for product backends (docs/protocol.md §10, "Revocation"). */
export function createRevoker(options: RevokerOptions): Revoker {
  const targets = normalizeTargetList(options.targets);
  // A lifetime below the issuer's, or not a number, would record revocations that lapse before
  // the tokens they revoke (a negative one: already lapsed, yet answered ok).
  const lifetime = integerOption(
    'maxTokenLifetimeSeconds',
    options.maxTokenLifetimeSeconds ?? MAX_TOKEN_TTL_SECONDS,
    1,
    MAX_TOKEN_TTL_SECONDS,
  );
  const skew = integerOption('clockSkewSeconds', options.clockSkewSeconds ?? 30, 0, 300);
  const now = options.now ?? Date.now;
  const timeoutMs = integerOption('timeoutMs', options.timeoutMs ?? 5_000, 1, 600_000);
  const clients = new Map<string, RedisClient>();
  let closed = false;
  const clientFor = (target: string): RedisClient => {
    let client = clients.get(target);
    if (client === undefined) {
      client = openRedis(target, {
        connectionName: 'streamgate-revoker',
        ...(options.username === undefined ? {} : { username: options.username }),
        ...(options.password === undefined ? {} : { password: options.password }),
      });
      // Errors surface on the commands that fail; the client's own event must not crash the process.
      client.on('error', () => undefined);
      clients.set(target, client);
    }
    return client;
  };

  return {
    async revoke(spec) {
      // After close() a new connection would be opened and keep the process alive.
      if (closed) return { ok: false, error: { code: 'closed', retryable: false, message: 'the revoker is closed' } };
      const parsed = specSchema.safeParse(spec);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return {
          ok: false,
          error: {
            code: 'revoke_invalid',
            retryable: false,
            message: `${issue?.path.join('.') || 'spec'}: ${issue?.message ?? 'invalid'}`,
          },
        };
      }
      const at = now();
      // Whole seconds, as `iat` is: every token issued up to now has iat < before; waiting for
      // `before` below makes every token issued after the call returns have iat >= before.
      const before = Math.floor(at / 1000) + 1;
      const expiresAt = (before + lifetime + skew) * 1000;
      const record: RevocationRecord = {
        v: 1,
        ...(parsed.data.subject === undefined ? {} : { sub: parsed.data.subject }),
        ...(parsed.data.stream === undefined ? {} : { stream: parsed.data.stream }),
        before,
        exp: expiresAt,
      };
      const member = JSON.stringify(record);
      const outcomes = await Promise.allSettled(
        targets.map(async (target) => {
          // A target that is down would queue the command until it came back: bounded instead.
          const timer = timeoutAfter(timeoutMs);
          const exec = clientFor(target)
            .multi()
            .zremrangebyscore(REVOCATIONS_KEY, '-inf', at)
            .zadd(REVOCATIONS_KEY, expiresAt, member)
            // The set's expiry only ever moves later: another issuer counting a shorter token
            // lifetime must not make the key, and the longer records in it, expire early.
            .pexpireat(REVOCATIONS_KEY, expiresAt, 'NX')
            .pexpireat(REVOCATIONS_KEY, expiresAt, 'GT')
            .publish(REVOCATIONS_CHANNEL, member)
            .exec();
          const replies = await Promise.race([exec, timer.promise]).finally(() => timer.clear());
          if (replies === 'timeout') {
            exec.catch(() => undefined);
            throw new Error(`no answer within ${timeoutMs} ms`);
          }
          const failed = replies?.find(([error]) => error !== null);
          if (replies === null || failed !== undefined) throw failed?.[0] ?? new Error('transaction discarded');
        }),
      );
      const failedTargets = targets.filter((_, i) => outcomes[i]?.status === 'rejected');
      if (failedTargets.length > 0) {
        const first = outcomes.find((o) => o.status === 'rejected');
        const reason = first?.status === 'rejected' && first.reason instanceof Error ? first.reason.message : 'unknown error';
        return {
          ok: false,
          error: {
            code: 'revoke_failed',
            retryable: true,
            message: `revocation not recorded on ${failedTargets.join(', ')}: ${reason}`,
            failedTargets,
          },
        };
      }
      const wait = before * 1000 - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      return { ok: true, before, expiresAt };
    },
    close() {
      closed = true;
      // quit() waits for a target that is down; disconnect() does not.
      for (const client of clients.values()) client.disconnect();
      clients.clear();
      return Promise.resolve();
    },
  };
}
