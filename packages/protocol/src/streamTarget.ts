import { z } from 'zod';
import { isJetStreamTarget, normalizeJetStreamTarget } from './jetStreamTarget.js';
import { normalizeRedisTarget } from './redisTarget.js';

/**
 * The log holding a stream, as a token's `redis` claim names it: a Redis target
 * (`redis://…`, `redis-cluster://…`, redisTarget.ts) or a NATS JetStream one (`nats://…`,
 * `tls://…`, jetStreamTarget.ts). The claim kept its name when JetStream targets came, so tokens
 * minted before still verify and issuers change nothing until they name a JetStream target.
 */
export const streamTargetSchema = z
  .string()
  .max(300)
  .refine((raw) => normalizeStreamTarget(raw) !== null, {
    message:
      'must be a redis:// or rediss:// URL with host, optional port and db, a redis-cluster:// or rediss-cluster:// URL with host and optional port, or a nats:// or tls:// JetStream URL with seeds and optional stream, and no credentials',
  })
  .transform((raw) => normalizeStreamTarget(raw) ?? raw);

/** The canonical form of a Redis or JetStream target, or null when it is neither. */
export function normalizeStreamTarget(raw: string): string | null {
  return isJetStreamTarget(raw) ? normalizeJetStreamTarget(raw) : normalizeRedisTarget(raw);
}
