import { z } from 'zod';
import { opsSnapshotSchema } from '@streamgate/ops';
import type { OpsSnapshot } from '@streamgate/ops';
import { ClockSkew } from './clockSkew.js';
import { extendDrainTrace } from './DrainTrace.js';
import type { DrainTrace } from './DrainTrace.js';

/** How far back the charts go, and how long a pod that stopped publishing is still shown. */
export const HISTORY_MS = 5 * 60_000;

export interface PodRecord {
  readonly snapshot: OpsSnapshot;
  /** Relays only: the latest drain its snapshots reported, kept after it ended. */
  readonly drain: DrainTrace | undefined;
  /**
   * Snapshots of this process the page never got (gaps in `seq`): 0 while the page resumes
   * without loss; more after a gap in the stream, or a snapshot the pod failed to write.
   */
  readonly missed: number;
}

export interface RelayPoint {
  readonly at: number;
  readonly connections: number;
  readonly deliveriesPerSecond: number;
}

export interface BadEntries {
  readonly count: number;
  /** The latest one's entry id and why it was refused. */
  readonly last: string | undefined;
}

/** What the page renders: immutable, a new object whenever anything changed. */
export interface FleetView {
  readonly version: number;
  /** Relays, then auth services, then ingest workers, each by name. */
  readonly pods: readonly PodRecord[];
  readonly relayHistory: ReadonlyMap<string, readonly RelayPoint[]>;
  readonly badEntries: BadEntries;
  readonly snapshots: number;
  /** The browser's clock minus this is the pods' clock. */
  readonly skewMs: number;
}

export interface FleetStoreOptions {
  /** The browser's clock; tests pass their own. */
  readonly now?: () => number;
  /** Listeners hear of changes at most this often: a replayed backlog is thousands of entries. */
  readonly notifyEveryMs?: number;
  readonly historyMs?: number;
}

const KIND_ORDER: Record<OpsSnapshot['kind'], number> = { relay: 0, auth: 1, ingest: 2 };

/**
 * Everything the dashboard knows, built from operations-stream entries. Each entry is parsed
 * here, at the edge: one that is not a snapshot is counted and its reason kept, never thrown.
 */
export class FleetStore {
  readonly #now: () => number;
  readonly #notifyEveryMs: number;
  readonly #historyMs: number;
  readonly #pods = new Map<string, PodRecord>();
  readonly #history = new Map<string, RelayPoint[]>();
  readonly #skew = new ClockSkew();
  readonly #listeners = new Set<() => void>();
  #bad: BadEntries = { count: 0, last: undefined };
  #snapshots = 0;
  #newestAt = 0;
  #version = 0;
  #view: FleetView | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: FleetStoreOptions = {}) {
    this.#now = options.now ?? Date.now;
    this.#notifyEveryMs = options.notifyEveryMs ?? 100;
    this.#historyMs = options.historyMs ?? HISTORY_MS;
  }

  /** One entry's `data` as the relay delivered it; `id` is its stream id. */
  ingest(data: unknown, id: string): void {
    const parsed = opsSnapshotSchema.safeParse(data);
    if (!parsed.success) {
      this.reject(id, z.prettifyError(parsed.error).replace(/\s+/g, ' '));
      return;
    }
    const snapshot = parsed.data;
    this.#snapshots++;
    this.#skew.observe(snapshot.at, this.#now());
    // Keyed by kind too: locally every app defaults to the same hostname as its pod name.
    const key = `${snapshot.kind}:${snapshot.pod}`;
    const previous = this.#pods.get(key);
    // Two processes under one name (a restart racing its predecessor's last snapshot): the newer picture wins.
    if (previous !== undefined && previous.snapshot.at > snapshot.at) {
      this.#changed();
      return;
    }
    let drain = previous?.drain;
    if (snapshot.kind === 'relay') {
      if (snapshot.drain !== null) drain = extendDrainTrace(drain, snapshot.drain, { at: snapshot.at, connections: snapshot.connections });
      const points = this.#history.get(snapshot.pod) ?? [];
      points.push({ at: snapshot.at, connections: snapshot.connections, deliveriesPerSecond: snapshot.deliveriesPerSecond });
      this.#history.set(snapshot.pod, points);
    }
    const sameProcess = previous !== undefined && previous.snapshot.startedAt === snapshot.startedAt;
    const missed = (sameProcess ? previous.missed : 0) + (sameProcess ? Math.max(snapshot.seq - previous.snapshot.seq - 1, 0) : 0);
    this.#pods.set(key, { snapshot, drain, missed });
    this.#newestAt = Math.max(this.#newestAt, snapshot.at);
    this.#prune();
    this.#changed();
  }

  /** An entry that never reached `ingest`: not in the entry format, say (the client's `malformed_entry`). */
  reject(id: string | undefined, reason: string): void {
    this.#bad = { count: this.#bad.count + 1, last: `${id ?? '(no id)'}: ${reason}`.slice(0, 300) };
    this.#changed();
  }

  view(): FleetView {
    this.#view ??= {
      version: this.#version,
      pods: [...this.#pods.values()].sort(
        (a, b) => KIND_ORDER[a.snapshot.kind] - KIND_ORDER[b.snapshot.kind] || a.snapshot.pod.localeCompare(b.snapshot.pod),
      ),
      relayHistory: new Map([...this.#history].map(([pod, points]) => [pod, [...points]])),
      badEntries: this.#bad,
      snapshots: this.#snapshots,
      skewMs: this.#skew.ms,
    };
    return this.#view;
  }

  /** For useSyncExternalStore. */
  readonly subscribe = (listener: () => void): (() => void) => {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  };

  readonly getView = (): FleetView => this.view();

  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#listeners.clear();
  }

  /** Drops what is older than the history, measured on the pods' clock (the newest snapshot's). */
  #prune(): void {
    const horizon = this.#newestAt - this.#historyMs;
    for (const [key, record] of this.#pods) if (record.snapshot.at < horizon) this.#pods.delete(key);
    for (const [pod, points] of this.#history) {
      const keep = points.findIndex((p) => p.at >= horizon);
      if (keep === -1) this.#history.delete(pod);
      else if (keep > 0) points.splice(0, keep);
    }
  }

  #changed(): void {
    this.#version++;
    this.#view = undefined;
    if (this.#timer !== undefined) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      for (const listener of this.#listeners) listener();
    }, this.#notifyEveryMs);
  }
}
