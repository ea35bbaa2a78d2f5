import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '@streamgate/protocol';
import type { Clock } from '@streamgate/protocol';
import { startNatsCluster, waitFor } from '@streamgate/testkit';
import type { NatsCluster } from '@streamgate/testkit';
import { NatsLink } from './NatsLink.js';

/*
 * NatsLink against a real 3-node cluster that requires a login, whose password the tests change
 * under the link (nats-server reloads its config on SIGHUP): a refused login, at the first connect
 * or at a reconnect, ends in a new connection once the password is right again.
 */

const USER = 'relay';
const FIRST = 'link-first-pw-81aa';
const SECOND = 'link-second-pw-4c2e';
const OTHER = 'link-other-pw-9d07';

let nats: NatsCluster | undefined;

beforeAll(async () => {
  nats = await startNatsCluster({ auth: { username: USER, password: FIRST } });
}, 60_000);

afterAll(async () => {
  await nats?.stop();
});

function cluster(): NatsCluster {
  if (nats === undefined) throw new Error('beforeAll did not start the cluster');
  return nats;
}

interface Recorded {
  readonly link: NatsLink;
  readonly errors: Error[];
  readonly retries: Error[];
  reconnects: number;
}

function openLink(pass: string, clock: Clock = systemClock): Recorded {
  const recorded: Omit<Recorded, 'link'> & { reconnects: number } = { errors: [], retries: [], reconnects: 0 };
  const link = new NatsLink({
    servers: cluster().nodes.map((node) => `127.0.0.1:${node.port}`),
    tls: false,
    user: USER,
    pass,
    pingIntervalMs: 1_000,
    connectTimeoutMs: 1_000,
    clock,
    reopenBaseMs: 50,
    reopenMaxMs: 300,
    onReconnect: () => recorded.reconnects++,
    onError: (error) => recorded.errors.push(error),
    onRetry: (error) => recorded.retries.push(error),
  });
  return Object.assign(recorded, { link });
}

const text = (errors: readonly Error[]): string => errors.map((error) => `${error.message} ${String(error.cause)}`).join('\n');

/**
 * Publishes on `subject` over the link's own connection (NATS echoes a connection's messages to
 * its own subscriptions) until `heard` says one arrived. Over the link's connection, so what is
 * checked is the link's subscription, not how soon the cluster's routes carry interest again after
 * a config reload (a publisher on another node missed for 5 s under CI load).
 */
async function deliversOn(link: NatsLink, subject: string, heard: () => boolean): Promise<void> {
  const nc = await link.connection(5_000);
  await waitFor(
    () => {
      nc.publish(subject, 'ping');
      return heard();
    },
    { timeoutMs: 5_000, intervalMs: 50, message: `nothing published on ${subject} reached the link's subscription` },
  );
}

describe('NatsLink', () => {
  it('refused at its first connect, it keeps trying with backoff and opens once the password is right', async () => {
    await cluster().reload({ username: USER, password: FIRST });
    const { link, errors, retries, ...counts } = openLink(SECOND);
    let heard = 0;
    // Made while no connection is open: subscribed once one is.
    link.subscribe('link.first', () => heard++);
    try {
      await waitFor(() => retries.length >= 3, { timeoutMs: 5_000, message: 'the link never tried again after a refused login' });
      expect(link.connected).toBe(false);
      // Once per outage, with the reason; every later attempt only counted.
      expect(errors).toHaveLength(1);
      expect(errors[0]?.message).toMatch(/authorization violation/i);
      expect(retries.every((error) => /authorization violation/i.test(error.message))).toBe(true);
      await expect(link.connection(1_000)).rejects.toThrow(/authorization violation/i);

      await cluster().reload({ username: USER, password: SECOND });
      await link.whenOpen();
      expect(link.connected).toBe(true);
      await deliversOn(link, 'link.first', () => heard > 0);
      // The first connection is no reconnect: nothing was read before it.
      expect(counts.reconnects).toBe(0);
      expect(text([...errors, ...retries])).not.toContain(SECOND);
    } finally {
      await link.close();
    }
  }, 20_000);

  it('refused at a reconnect (password rotated), it opens a new connection, subscribes again and reports a reconnect', async () => {
    await cluster().reload({ username: USER, password: FIRST });
    const recorded = openLink(FIRST);
    const { link, errors, retries } = recorded;
    let heard = 0;
    link.subscribe('link.rotated', () => heard++);
    try {
      await link.whenOpen();
      await deliversOn(link, 'link.rotated', () => heard > 0);

      // The server drops the connection whose login no longer holds; the client's reconnect is refused and it gives up.
      await cluster().reload({ username: USER, password: OTHER });
      await waitFor(() => !link.connected && retries.length >= 2, {
        timeoutMs: 8_000,
        message: 'the link never went down and retried after the password was rotated',
      });
      await expect(link.connection(1_000)).rejects.toThrow();
      // Logged: the loss, and the refusal with its reason; the client's further refused attempts and the new connection's only counted.
      expect(errors).toHaveLength(2);
      expect(errors.map((error) => error.message)).toEqual(
        expect.arrayContaining([expect.stringMatching(/^disconnected from /), expect.stringMatching(/authorization violation/i)]),
      );
      const logged = errors.length;

      await cluster().reload({ username: USER, password: FIRST });
      await waitFor(() => link.connected, { timeoutMs: 5_000, message: 'the link never came back once the password was right again' });
      expect(recorded.reconnects).toBe(1);
      // No more lines for the attempts in between: they were counted.
      expect(errors).toHaveLength(logged);
      heard = 0;
      await deliversOn(link, 'link.rotated', () => heard > 0);
      expect(text([...errors, ...retries])).not.toContain(FIRST);
    } finally {
      await link.close();
    }
  }, 25_000);

  it('waits a bounded full-jitter backoff on its clock between attempts, and closed while down tries no more', async () => {
    await cluster().reload({ username: USER, password: FIRST });
    const timers: Array<{ readonly ms: number; readonly fn: () => void; cancelled: boolean }> = [];
    const clock = {
      now: () => Date.now(),
      after: (ms: number, fn: () => void) => {
        const timer = { ms, fn, cancelled: false };
        timers.push(timer);
        return () => {
          timer.cancelled = true;
        };
      },
    };
    const { link, errors, retries } = openLink(OTHER, clock);
    const opened = link.whenOpen();
    for (let attempt = 0; attempt < 5; attempt++) {
      await waitFor(() => errors.length + retries.length > attempt, { timeoutMs: 5_000, message: `attempt ${attempt} was never refused` });
      const timer = timers.at(-1);
      if (timer === undefined) throw new Error('no backoff was scheduled on the clock');
      expect(timer.ms).toBeGreaterThanOrEqual(0);
      expect(timer.ms).toBeLessThan(Math.min(300, 50 * 2 ** attempt));
      if (attempt < 4) timer.fn();
    }
    expect(timers).toHaveLength(5);
    await link.close();
    expect(timers.at(-1)?.cancelled).toBe(true);
    // A timer that fires anyway (already due) opens nothing on a closed link.
    timers.at(-1)?.fn();
    await expect(opened).rejects.toThrow(/closed/);
    await expect(link.connection(1_000)).rejects.toThrow(/closed/);
    expect(errors).toHaveLength(1);
    expect(timers).toHaveLength(5);
  }, 15_000);
});
