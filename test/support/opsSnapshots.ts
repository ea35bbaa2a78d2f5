import type { Redis } from 'ioredis';
import { OPS_STREAM_DEFAULT, OPS_STREAM_MAXLEN, OpsSnapshotPublisher, opsSnapshotSchema } from '@streamgate/ops';
import type { AuthSnapshot, IngestSnapshot, OpsPublishFailure, OpsSnapshot, RelaySnapshot } from '@streamgate/ops';

/** A relay snapshot with quiet defaults; `at`, `seq` and `startedAt` are set by the writer. */
export function relaySnapshot(pod: string, fields: Partial<RelaySnapshot> = {}): RelaySnapshot {
  return {
    kind: 'relay',
    v: 1,
    pod,
    at: 0,
    startedAt: 0,
    seq: 0,
    truncated: false,
    ready: true,
    connections: 0,
    subscriptions: 0,
    streamsWatched: 0,
    deliveriesTotal: 0,
    deliveriesPerSecond: 0,
    refusals: {},
    readModes: [],
    drain: null,
    ...fields,
  };
}

export function authSnapshot(pod: string, fields: Partial<AuthSnapshot> = {}): AuthSnapshot {
  return {
    kind: 'auth',
    v: 1,
    pod,
    at: 0,
    startedAt: 0,
    seq: 0,
    truncated: false,
    ready: true,
    tokensIssuedTotal: 0,
    tokensPerSecond: 0,
    refusals: {},
    signingKeyIds: [],
    ...fields,
  };
}

export function ingestSnapshot(pod: string, fields: Partial<IngestSnapshot> = {}): IngestSnapshot {
  return { kind: 'ingest', v: 1, pod, at: 0, startedAt: 0, seq: 0, truncated: false, leasesHeld: 0, chains: [], venues: [], ...fields };
}

/**
 * Pretend pods for tests of readers of the operations stream: each publishes through the
 * project's own OpsSnapshotPublisher (so every entry is schema-checked and size-bounded as a real
 * app's is) into the stream as `XADD <stream> MAXLEN ~ 2000 * data <json>`. A pod's picture is
 * whatever its `state` function returns at each tick.
 */
export class OpsSnapshotWriter {
  readonly #redis: Redis;
  readonly #stream: string;
  readonly #intervalMs: number;
  readonly #pods = new Map<string, OpsSnapshotPublisher>();
  readonly #written = new Map<string, OpsSnapshot[]>();
  readonly failures: OpsPublishFailure[] = [];

  constructor(redis: Redis, options: { stream?: string; intervalMs: number }) {
    this.#redis = redis;
    this.#stream = options.stream ?? OPS_STREAM_DEFAULT;
    this.#intervalMs = options.intervalMs;
  }

  /**
   * Starts publishing a pod at once and then every interval, until `stop(pod)`. With `past`, the
   * pod first writes that many snapshots of the past, one a second as the apps do (dated back
   * from now), so a reader has minutes of history at once. `state` gets each snapshot's time.
   */
  async start(pod: string, state: (at: number) => OpsSnapshot, options: { past?: number } = {}): Promise<void> {
    if (this.#pods.has(pod)) throw new Error(`pod ${pod} is already publishing`);
    const past = options.past ?? 0;
    const now = Date.now();
    const startedAt = now - past * 1_000 - 3_000;
    for (let seq = 0; seq < past; seq++) {
      const at = now - (past - seq) * 1_000;
      await this.#write(pod, JSON.stringify(opsSnapshotSchema.parse({ ...state(at), pod, seq, startedAt, at })));
    }
    const publisher = new OpsSnapshotPublisher({
      collect: (seq) => {
        const at = Date.now();
        return { ...state(at), pod, seq: past + seq, startedAt, at };
      },
      sink: (json) => this.#write(pod, json),
      onFailure: (failure) => this.failures.push(failure),
      intervalMs: this.#intervalMs,
    });
    this.#pods.set(pod, publisher);
    publisher.start();
    await publisher.publishOnce();
  }

  async #write(pod: string, json: string): Promise<void> {
    await this.#redis.xadd(this.#stream, 'MAXLEN', '~', OPS_STREAM_MAXLEN, '*', 'data', json);
    const written = this.#written.get(pod) ?? [];
    written.push(opsSnapshotSchema.parse(JSON.parse(json)));
    this.#written.set(pod, written);
  }

  /** Every snapshot written for `pod`, oldest first. */
  written(pod: string): readonly OpsSnapshot[] {
    return this.#written.get(pod) ?? [];
  }

  /** The pod publishes nothing more, as if it had exited. */
  async stop(pod: string): Promise<void> {
    await this.#pods.get(pod)?.stop();
    this.#pods.delete(pod);
  }

  /**
   * The pod's last word, as the apps write it on exit (`publishLast` of startRedisOpsPublisher):
   * the loop stops, one fresh snapshot is written, then nothing more. Returns that snapshot.
   */
  async stopWithLast(pod: string): Promise<OpsSnapshot> {
    const publisher = this.#pods.get(pod);
    if (publisher === undefined) throw new Error(`pod ${pod} is not publishing`);
    await publisher.stop();
    const before = this.written(pod).length;
    await publisher.publishOnce();
    this.#pods.delete(pod);
    const last = this.written(pod).at(-1);
    if (last === undefined || this.written(pod).length === before)
      throw new Error(`the last snapshot of ${pod} was not written: ${JSON.stringify(this.failures)}`);
    return last;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.#pods.keys()].map((pod) => this.stop(pod)));
  }

  /** An entry as any producer could write it, schema or not: `fields` verbatim. */
  async writeRaw(...fields: string[]): Promise<void> {
    await this.#redis.xadd(this.#stream, '*', ...fields);
  }
}
