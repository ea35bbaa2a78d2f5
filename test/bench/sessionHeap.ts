import { writeHeapSnapshot } from 'node:v8';
import { systemClock } from '@streamgate/protocol';
import { Session } from '../../apps/relay/src/Session.js';
import type { Connection } from '../../apps/relay/src/core/Connection.js';
import { SessionHarness } from '../../apps/relay/src/testing/SessionHarness.js';
import { waitFor } from '@streamgate/testkit';

// `node --expose-gc --conditions=streamgate-source --import tsx test/bench/sessionHeap.ts [sessions]`:
// the JavaScript heap one idle connection holds in the relay, in process and without sockets, so
// that it can be measured on a busy machine where RSS slopes wander. Each session is welcomed and
// subscribed, with a real token and the system clock (its timers are real), to one quiet stream
// they all share, as the bench's memory part does. The socket's own memory (uWS, the kernel) is
// not in it: bare uWS is the memory part's `uws` series.

const sessions = Number(process.argv[2] ?? 10_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');

/** A socket that keeps nothing it is sent, as uWS keeps nothing once written. */
class SinkConnection implements Connection {
  closed = false;
  live = 0;
  send(frame: string): boolean {
    if (frame.startsWith('{"op":"live"')) this.live++;
    return true;
  }
  subscribe(): void {}
  unsubscribe(): void {}
  bufferedAmount(): number {
    return 0;
  }
  cork(fn: () => void): void {
    fn();
  }
  close(): void {
    this.closed = true;
  }
}

// The harness's verifier and hub over an in-memory source; its manual clock starts now and the
// sessions run on the system clock, so each token's refresh and expiry timers are real ones.
const harness = await SessionHarness.create({ startMs: Date.now() });
const deps = { ...harness.deps, clock: systemClock };
const tokens = harness.tokens;
const token = await tokens.sign({ stream: 'bench:idle', exp: Math.floor(Date.now() / 1000) + 3_600 });
const frame = JSON.stringify({ op: 'subscribe', sid: 's1', token });

const held: Array<{ conn: SinkConnection; session: Session }> = [];
async function open(n: number): Promise<void> {
  const batch: SinkConnection[] = [];
  for (let i = 0; i < n; i++) {
    const conn = new SinkConnection();
    const session = new Session(conn, deps);
    session.open();
    session.onText(frame, frame.length);
    held.push({ conn, session });
    batch.push(conn);
  }
  await waitFor(() => batch.every((c) => c.live === 1), { timeoutMs: 60_000, message: 'every session live' });
}

function heapAfterGc(): number {
  for (let i = 0; i < 3; i++) gc?.();
  return process.memoryUsage().heapUsed;
}

// A warm-up wave: the first subscribe creates the stream's channel and JIT-compiles the path.
await open(200);
const before = heapAfterGc();
await open(sessions);
const after = heapAfterGc();
// SESSION_HEAP_SNAPSHOT=<file>: a heap snapshot with the sessions open, to see what each holds.
const snapshotFile = process.env.SESSION_HEAP_SNAPSHOT;
if (snapshotFile !== undefined) writeHeapSnapshot(snapshotFile);
process.stdout.write(`${sessions} idle sessions: ${((after - before) / sessions).toFixed(0)} bytes of JS heap each\n`);
for (const { session } of held) session.onClose();
process.exit(0);
