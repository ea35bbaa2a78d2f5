import { z } from 'zod';
import { streamTargetSchema } from './streamTarget.js';
import { streamNameSchema } from './streamName.js';

/** Version of the claim set; a relay refuses tokens of a version it does not know. */
export const CLAIMS_VERSION = 1;

/**
 * The claims of a relay token. Registered claims keep their JWT meaning; `stream` and `redis`
 * name what the bearer may read. The relay checks these and nothing else: it never asks the
 * backend, which is what keeps reconnect storms away from authorization.
 */
export const relayClaimsSchema = z.object({
  iss: z.string().min(1),
  aud: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]),
  sub: z.string().min(1).max(256),
  exp: z.number().int().positive(),
  iat: z.number().int().positive(),
  nbf: z.number().int().positive().optional(),
  jti: z.string().min(1).max(128),
  ver: z.literal(CLAIMS_VERSION),
  stream: streamNameSchema,
  /** The stream's log: a Redis or, despite the name, a NATS JetStream target (streamTarget.ts). */
  redis: streamTargetSchema,
});

export type RelayClaims = z.infer<typeof relayClaimsSchema>;

/** Algorithms a relay may be configured to accept. Asymmetric only: relays never hold a signing key. */
export const tokenAlgorithmSchema = z.enum(['ES256', 'EdDSA']);
export type TokenAlgorithm = z.infer<typeof tokenAlgorithmSchema>;
