import type { StandardSchemaV1 } from '@standard-schema/spec';
import { streamNameSchema } from './streamName.js';
import type { StreamName } from './streamName.js';

/**
 * A concrete stream (one Redis key) whose entries carry `T`. `schema` is any Standard Schema
 * (zod 3.24+, zod 4, valibot, arktype, …) whose output is `T`; the publisher validates with it.
 */
export interface StreamRef<T> {
  readonly name: StreamName;
  readonly schema: StandardSchemaV1<unknown, T> | undefined;
  readonly __payload?: T;
}

/** A family of streams sharing a payload type: `agentReplies.for(runId)` names one of them. */
export interface StreamDefinition<T> extends StreamRef<T> {
  for(...parts: ReadonlyArray<string | number>): StreamRef<T>;
}

/**
 * Declares a stream's payload type once, for the publisher and the token issuer alike.
 * With a schema (any Standard Schema), `T` is its output type and the publisher validates every
 * payload with it; the schema library is the product's own, not a dependency of streamgate.
 */
export function defineStream<S extends StandardSchemaV1>(name: string, schema: S): StreamDefinition<StandardSchemaV1.InferOutput<S>>;
export function defineStream<T>(name: string): StreamDefinition<T>;
export function defineStream<T>(name: string, schema?: StandardSchemaV1<unknown, T>): StreamDefinition<T> {
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
