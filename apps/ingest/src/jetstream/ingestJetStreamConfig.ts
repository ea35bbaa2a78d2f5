import { envText, presentText } from '@streamgate/boot';
import type { ConfigProblem, Env } from '@streamgate/boot';
import { normalizeJetStreamTarget, parseJetStreamTarget } from '@streamgate/protocol';
import type { JetStreamTargetAddress } from '@streamgate/protocol';

/** Where this worker writes its streams when they live in NATS JetStream, and its own credentials. */
export interface IngestJetStreamConfig {
  /** Normal form (§17): what logs and /readyz name. */
  readonly target: string;
  readonly address: JetStreamTargetAddress;
  readonly username: string | undefined;
  readonly password: string | undefined;
}

const TARGET_FORM =
  'must be a nats:// or tls:// JetStream target: seeds host[:port] separated by commas, then optionally /STREAM (default STREAMGATE), ' +
  'without credentials (they go in INGEST_NATS_USERNAME / INGEST_NATS_PASSWORD); set it to the target relays allowlist, e.g. nats://nats-0:4222,nats-1:4222/STREAMGATE';

/** The variables, for ingestConfigSchema (docs/protocol.md §17). */
export const ingestJetStreamEnv = {
  // Set: every stream is written to this JetStream target; leases and demand stay on
  // INGEST_REDIS_URL (a lease needs a per-key TTL, which nats-server 2.9's KV lacks).
  INGEST_JETSTREAM_TARGET: envText({
    optional: 'to write the streams to Redis',
    check: (text) => (parseJetStreamTarget(text) === null ? TARGET_FORM : null),
  }),
  INGEST_NATS_USERNAME: envText({ optional: 'for no username' }),
  INGEST_NATS_PASSWORD: envText({ optional: 'for no password' }),
};

/** Variables that mean something only for streams in Redis: set beside a JetStream target, they would be ignored. */
const REDIS_ONLY: Readonly<Record<string, string>> = {
  INGEST_REDIS_TARGETS:
    'places streams on several Redis instances, but with INGEST_JETSTREAM_TARGET the streams live in JetStream and their leases and demand in one Redis: set INGEST_REDIS_URL to it instead',
  INGEST_STREAM_MAXLEN:
    'trims Redis streams; a JetStream stream is bounded by its own limits (max_msgs_per_subject, max_age): unset it and set those on the stream',
  INGEST_DEDUPE_TTL_MS:
    "is the life of Redis dedupe keys; on JetStream a replay is recognised by the key's state log and the stream's duplicate_window: unset it",
};

/**
 * Combinations that make no sense, from the raw environment (a variable left at its default is
 * not a choice): Redis-only settings beside INGEST_JETSTREAM_TARGET, and NATS credentials without it.
 */
export function ingestJetStreamProblems(env: Env): ConfigProblem[] {
  // Values are not shown: a mistyped target list may carry credentials.
  const problem = (variable: string, why: string): ConfigProblem => ({ variable, message: `${variable} is set: it ${why}` });
  if (presentText(env.INGEST_JETSTREAM_TARGET) !== undefined) {
    return Object.entries(REDIS_ONLY)
      .filter(([variable]) => presentText(env[variable]) !== undefined)
      .map(([variable, why]) => problem(variable, `${why} (INGEST_JETSTREAM_TARGET is set)`));
  }
  return ['INGEST_NATS_USERNAME', 'INGEST_NATS_PASSWORD']
    .filter((variable) => presentText(env[variable]) !== undefined)
    .map((variable) =>
      problem(
        variable,
        'is for the NATS connection, but INGEST_JETSTREAM_TARGET is not set, so there is none: set INGEST_JETSTREAM_TARGET or unset this',
      ),
    );
}

/** The parsed JetStream target and credentials; undefined when the streams live in Redis. */
export function ingestJetStreamConfig(env: {
  readonly INGEST_JETSTREAM_TARGET: string | undefined;
  readonly INGEST_NATS_USERNAME: string | undefined;
  readonly INGEST_NATS_PASSWORD: string | undefined;
}): IngestJetStreamConfig | undefined {
  const raw = env.INGEST_JETSTREAM_TARGET;
  if (raw === undefined) return undefined;
  const address = parseJetStreamTarget(raw);
  const target = normalizeJetStreamTarget(raw);
  // The schema's check refused anything else.
  if (address === null || target === null) throw new Error(`INGEST_JETSTREAM_TARGET passed its check but does not parse: ${raw}`);
  return { target, address, username: env.INGEST_NATS_USERNAME, password: env.INGEST_NATS_PASSWORD };
}
