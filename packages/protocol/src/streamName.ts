import * as z from 'zod/mini';

/**
 * A stream's name is its Redis key, verbatim: a producer in any language XADDs to this key and
 * the relay reads it. The character set keeps names safe in URLs, logs and metric labels.
 */
export const streamNameSchema = z
  .string()
  .check(z.minLength(1), z.maxLength(200), z.regex(/^[A-Za-z0-9_.:{}\-/]+$/, 'may contain only letters, digits and _ . : { } - /'));

export type StreamName = z.infer<typeof streamNameSchema>;
