import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { record } from './support/recorder.js';
import { useFleet } from './support/startFleet.js';

// A frozen Redis (SIGSTOP: sockets open, nothing answered) shows only once a PING is 2 s
// overdue; the bound of docs/protocol.md §8 ("has not answered for RELAY_REDIS_DOWN_AFTER_MS")
// counts from when it stopped answering, not from when that showed (it was 5.8 s for 3 s).
const DOWN_AFTER_MS = 3_000;
/** The health check's period, the PING cadence and timer lateness on a loaded 2-core machine. */
const SLACK_MS = 1_500;

const getFleet = useFleet({ relays: 1, relayEnv: { RELAY_REDIS_DOWN_AFTER_MS: String(DOWN_AFTER_MS) } });

describe('a frozen Redis target', () => {
  it('is held down RELAY_REDIS_DOWN_AFTER_MS after it stopped answering', async () => {
    const fleet = getFleet();
    const [relay] = fleet.relays;
    const pid = fleet.redis.service?.pid;
    if (relay === undefined || pid === undefined) throw new Error('a relay and a running Redis expected');
    const rec = record(fleet, [relay.url], 'frozen-target');
    let frozen = false;
    try {
      await waitFor(() => rec.sub.state === 'live', { timeoutMs: 10_000, message: 'never went live' });
      process.kill(pid, 'SIGSTOP');
      frozen = true;
      const frozenAt = Date.now();
      await waitFor(() => rec.errors.some((e) => e.code === 'stream_unavailable'), {
        timeoutMs: DOWN_AFTER_MS + 10_000,
        message: 'the subscription was never ended as unavailable',
      });
      const heldDownAfterMs = Date.now() - frozenAt;
      console.log(`frozen target: held down ${heldDownAfterMs} ms after SIGSTOP (bound ${DOWN_AFTER_MS} ms)`);
      expect(heldDownAfterMs).toBeGreaterThanOrEqual(DOWN_AFTER_MS - 100);
      expect(heldDownAfterMs).toBeLessThanOrEqual(DOWN_AFTER_MS + SLACK_MS);
    } finally {
      if (frozen) process.kill(pid, 'SIGCONT');
      rec.close();
    }
  });
});
