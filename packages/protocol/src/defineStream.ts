import type { z } from 'zod';
import { streamNameSchema } from './streamName.js';
import type { StreamName } from './streamName.js';

/** A concrete stream (one Redis key) whose entries carry `T`. */
export interface StreamRef<T> {
  readonly name: StreamName;
  readonly schema: z.ZodType<T> | undefined;
  readonly __payload?: T;
}

/** A family of streams sharing a payload type: `agentReplies.for(runId)` names one of them. */
export interface StreamDefinition<T> extends StreamRef<T> {
  for(...parts: ReadonlyArray<string | number>): StreamRef<T>;
}

/**
 * Declares a stream's payload type once, for the publisher and the token issuer alike.
 * With a schema, `T` is inferred from it and the publisher validates every payload.
 */
export function defineStream<S extends z.ZodType>(name: string, schema: S): StreamDefinition<z.output<S>>;
export function defineStream<T>(name: string): StreamDefinition<T>;
export function defineStream<T>(name: string, schema?: z.ZodType<T>): StreamDefinition<T> {
  const base = streamNameSchema.parse(name);
  const ref = (streamName: string): StreamRef<T> => ({ name: streamNameSchema.parse(streamName), schema });
  return {
    name: base,
    schema,
    for: (...parts) => {
      if (parts.length === 0) throw new TypeError('defineStream(...).for() needs at least one part');
      return ref(`${base}:${parts.map(String).join(':')}`);
    },
  };
}
