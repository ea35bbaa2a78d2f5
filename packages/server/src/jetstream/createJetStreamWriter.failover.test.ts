import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backoffDelay, defineStream, jetStreamSequence, streamOfJetStreamSubject } from '@streamgate/protocol';
import { startNatsCluster, waitFor } from '@streamgate/testkit';
import type { NatsCluster } from '@streamgate/testkit';
import { createJetStreamWriter } from './createJetStreamWriter.js';
import { ensureJetStream } from './ensureJetStream.js';

const STREAM = 'FAILOVER';
const jobs = defineStream('jobs', z.object({ task: z.number(), step: z.number() }));
const TASKS = 4;
const STEPS = 300;
// Killed once this many writes are acknowledged, while every task keeps publishing.
const KILL_AFTER = 200;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

type Acked = { task: number; step: number; seq: number; duplicate: boolean };

let cluster: NatsCluster | undefined;
afterAll(async () => {
  await cluster?.stop();
});

describe('createJetStreamWriter when the stream leader dies (real 3-node JetStream cluster)', () => {
  it('keeps every acknowledged write exactly once and in order when the leader is killed mid-publish', async () => {
    const nats = (cluster = await startNatsCluster());
    const nc = await nats.connect();
    const jsm = await jetstreamManager(nc);
    const ensured = await ensureJetStream(jsm, { stream: STREAM });
    if (!ensured.ok) throw new Error(ensured.error.message);
    const writer = createJetStreamWriter({ connection: nc, stream: STREAM, timeoutMs: 1_000 });

    const acked: Acked[] = [];
    const refusals = new Map<string, number>();
    // Set inside the tasks' loop; an object, so the type checker does not take it for always null.
    const chaos: { kill: Promise<number> | null } = { kill: null };
    let ackedAtKill = -1;
    const deadline = Date.now() + 40_000;

    async function runTask(task: number): Promise<void> {
      const ref = jobs.for('failover', task);
      for (let step = 0; step < STEPS; step += 1) {
        // A writer that owns its retries: the same key until an ack, so a write whose ack was lost
        // with the leader is answered as a duplicate rather than stored twice.
        for (let attempt = 0; ;) {
          const result = await writer.publish(ref, { task, step }, { idempotencyKey: `t${task}-s${step}` });
          if (result.ok) {
            acked.push({ task, step, seq: jetStreamSequence(result.id) ?? -1, duplicate: result.duplicate });
            break;
          }
          if (!result.error.retryable) throw new Error(`task ${task} step ${step}: ${result.error.code}: ${result.error.message}`);
          refusals.set(result.error.code, (refusals.get(result.error.code) ?? 0) + 1);
          if (Date.now() > deadline) throw new Error(`task ${task} step ${step} still failing: ${result.error.message}`);
          // As a producer would: back off, so an election is not met with a storm of retries.
          await sleep(backoffDelay(attempt, 20, 500));
          attempt += 1;
        }
        if (chaos.kill === null && acked.length >= KILL_AFTER) {
          ackedAtKill = acked.length;
          chaos.kill = nats.streamLeader(STREAM).then(async (leader) => {
            await nats.kill(leader);
            return leader;
          });
        }
      }
    }

    await Promise.all(Array.from({ length: TASKS }, (_, task) => runTask(task)));
    const killed = await (chaos.kill ?? Promise.reject(new Error('the leader was never killed')));
    const newLeader = await waitFor(() => nats.streamLeader(STREAM), { timeoutMs: 10_000, message: 'the stream has a new leader' });
    expect(newLeader).not.toBe(killed);
    // The kill happened with writes still to come, not after the last.
    expect(ackedAtKill).toBeLessThan(TASKS * STEPS);

    // A producer replaying its last writes before the kill (as after its own crash) must get the
    // old leader's ids back: the new leader rebuilt the duplicate window from the replicas.
    const replayed = acked.slice(Math.max(0, ackedAtKill - 20), ackedAtKill);
    const replays = await Promise.all(
      replayed.map(({ task, step }) => writer.publish(jobs.for('failover', task), { task, step }, { idempotencyKey: `t${task}-s${step}` })),
    );
    expect(replays.map((result) => (result.ok ? `${result.duplicate} ${result.id}` : result.error.code))).toEqual(
      replayed.map(({ seq }) => `true 0-${seq}`),
    );

    // Read the whole stream back from the surviving nodes.
    const lastSeq = (await jsm.streams.info(STREAM)).state.last_seq;
    const stored = new Map<number, { task: number; step: number }>();
    const copies = new Map<string, number>();
    for (let seq = 1; seq <= lastSeq; seq += 1) {
      const message = await jsm.streams.getMessage(STREAM, { seq });
      if (message === null) continue;
      const entry = jobs.schema?.['~standard'].validate(message.json());
      if (entry === undefined || entry instanceof Promise || entry.issues !== undefined) throw new Error(`seq ${seq} is not an entry`);
      expect(streamOfJetStreamSubject(STREAM, message.subject)).toBe(`jobs:failover:${entry.value.task}`);
      stored.set(seq, entry.value);
      const key = `${entry.value.task}/${entry.value.step}`;
      copies.set(key, (copies.get(key) ?? 0) + 1);
    }

    const lost = acked.filter(({ task, step, seq }) => stored.get(seq)?.task !== task || stored.get(seq)?.step !== step).length;
    const duplicated = acked.filter(({ task, step }) => (copies.get(`${task}/${step}`) ?? 0) > 1).length;
    let outOfOrder = 0;
    for (let task = 0; task < TASKS; task += 1) {
      const seqs = acked.filter((write) => write.task === task).sort((a, b) => a.step - b.step);
      outOfOrder += seqs.filter((write, i) => i > 0 && write.seq <= (seqs[i - 1]?.seq ?? Infinity)).length;
    }
    console.log(
      `leader n${killed + 1} killed after ${ackedAtKill} acks; new leader n${newLeader + 1}; ` +
        `retried refusals ${JSON.stringify(Object.fromEntries(refusals))}; retries answered as duplicates ` +
        `${acked.filter((write) => write.duplicate).length}; stream holds ${stored.size} messages`,
    );
    console.log(`acknowledged writes lost ${lost}`);
    console.log(`acknowledged writes stored twice ${duplicated}; out of order ${outOfOrder}`);

    expect(acked).toHaveLength(TASKS * STEPS);
    expect(lost).toBe(0);
    expect(duplicated).toBe(0);
    expect(outOfOrder).toBe(0);
    // Nothing but the acknowledged writes: every retry of a stored write was answered as a duplicate.
    expect(stored.size).toBe(TASKS * STEPS);
    await writer.close();
  }, 60_000);
});
