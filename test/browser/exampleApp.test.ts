import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { demoStream } from '@streamgate/auth';
import { createPublisher } from '@streamgate/server';
import type { Publisher } from '@streamgate/server';
import { repoRoot, spawnService, startChromium, waitFor } from '@streamgate/testkit';
import type { ChromiumBrowser, Service } from '@streamgate/testkit';
import { startFleet } from '../support/startFleet.js';
import type { Fleet, FleetRelay } from '../support/startFleet.js';

// The example app of examples/vite-react, served by its own Vite dev server exactly as its README
// runs it, in real headless Chromium against a fleet of real processes: Redis, auth, two relays.

const exampleDir = join(repoRoot(), 'examples', 'vite-react');
const artifactsDir = join(repoRoot(), 'test', 'browser', 'artifacts');

let fleet: Fleet | undefined;
let vite: Service | undefined;
let browser: ChromiumBrowser | undefined;
let ticker: Ticker | undefined;
/** Uncaught exceptions in the page: none is expected. */
const pageErrors: string[] = [];
/** Console errors, for the failure message only: a killed relay's socket is logged as one. */
const consoleErrors: string[] = [];

/** Publishes seq 0, 1, 2… on demo:ticks every `everyMs`, like `npm run fleet` but faster. */
class Ticker {
  readonly #publisher: Publisher;
  readonly #timer: NodeJS.Timeout;
  readonly #inFlight = new Set<Promise<void>>();
  readonly #failures: string[] = [];
  #next = 0;
  #stopped: Promise<number> | undefined;

  constructor(publisher: Publisher, everyMs: number) {
    this.#publisher = publisher;
    this.#timer = setInterval(() => this.#tick(), everyMs);
  }

  get published(): number {
    return this.#next;
  }

  get failures(): readonly string[] {
    return this.#failures;
  }

  #tick(): void {
    const seq = this.#next++;
    const write = this.#publisher.publish(demoStream.for('ticks'), { seq, text: `tick ${seq}`, at: new Date().toISOString() }).then((r) => {
      if (!r.ok) this.#failures.push(`seq ${seq}: ${r.error.code}: ${r.error.message}`);
    });
    this.#inFlight.add(write);
    void write.finally(() => this.#inFlight.delete(write));
  }

  /** Stops ticking; resolves with the number of events written once the last write settled. */
  stop(): Promise<number> {
    clearInterval(this.#timer);
    this.#stopped ??= Promise.all(this.#inFlight)
      .then(() => this.#publisher.close())
      .then(() => this.#next);
    return this.#stopped;
  }
}

interface PageView {
  state: string;
  relay: string;
  received: number;
  continuity: string;
  seqs: number[];
  /** For each event shown, the relay it came through. */
  vias: string[];
}

/** What the page shows, read from its DOM in one evaluation. */
async function readPage(page: Page): Promise<PageView> {
  return page.evaluate(() => {
    const text = (id: string) => document.querySelector(`[data-testid="${id}"]`)?.textContent ?? '';
    const items = Array.from(document.querySelectorAll('[data-testid="ticks"] li'));
    return {
      state: text('state'),
      relay: text('relay'),
      received: Number(text('received')),
      continuity: text('continuity'),
      seqs: items.map((li) => Number(li.getAttribute('data-seq'))),
      vias: items.map((li) => li.getAttribute('data-via') ?? ''),
    };
  });
}

function relayNamed(url: string): FleetRelay {
  const relay = fleet?.relays.find((r) => r.url === url);
  if (relay === undefined) throw new Error(`the page shows relay ${JSON.stringify(url)}, which is none of the fleet's`);
  return relay;
}

/** Waits until the page shows what `check` wants; at the deadline, fails with what it showed instead. */
async function untilPage(page: Page, what: string, timeoutMs: number, check: (view: PageView) => boolean): Promise<PageView> {
  let last: PageView | undefined;
  try {
    return await waitFor(
      async () => {
        last = await readPage(page);
        return check(last) && last;
      },
      { timeoutMs, message: what },
    );
  } catch (error) {
    const shown = last === undefined ? '(nothing read)' : JSON.stringify({ ...last, seqs: last.seqs.slice(-20) });
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\nthe page showed: ${shown}\n` +
        `page errors: ${JSON.stringify(pageErrors)}\nconsole errors: ${JSON.stringify(consoleErrors)}\n${vite?.output() ?? ''}`,
      { cause: error },
    );
  }
}

async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(artifactsDir, { recursive: true });
  const path = join(artifactsDir, name);
  await page.screenshot({ path, fullPage: true, timeout: 10_000 });
  console.log(`example app screenshot: ${path}`);
}

beforeAll(async () => {
  fleet = await startFleet({ relays: 2 });
  vite = await spawnService({
    name: 'vite',
    command: process.execPath,
    args: [join(exampleDir, 'node_modules', 'vite', 'bin', 'vite.js'), '--host', '127.0.0.1', '--port', '0', '--strictPort'],
    cwd: exampleDir,
    env: {
      NO_COLOR: '1',
      VITE_AUTH_URL: fleet.authUrl,
      VITE_RELAY_URLS: fleet.relays.map((r) => r.url).join(','),
    },
    readyPattern: /Local:\s+http:\/\/127\.0\.0\.1:\d+/,
    readyTimeoutMs: 30_000,
  });
  browser = await startChromium();
  browser.page.on('pageerror', (error) => pageErrors.push(error.message));
  browser.page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
});

afterAll(async () => {
  await ticker?.stop();
  await browser?.close();
  await vite?.stop();
  await fleet?.stop();
});

describe('the Vite + React example in headless Chromium', () => {
  it('renders demo:ticks and resumes on the other relay after a SIGKILL with no gap and no duplicate', async () => {
    if (fleet === undefined || vite === undefined || browser === undefined) throw new Error('beforeAll did not finish');
    const { page } = browser;
    const port = /Local:\s+http:\/\/127\.0\.0\.1:(\d+)/.exec(vite.lines.join('\n'))?.[1];
    if (port === undefined) throw new Error(`no URL in Vite's output:\n${vite.output()}`);
    try {
      await page.goto(`http://127.0.0.1:${port}/`, { timeout: 30_000 });
      // The first load also has Vite pre-bundle the app's dependencies.
      await untilPage(page, 'the page never went live', 30_000, (view) => view.state === 'live');

      // Started only now: a subscription without a resume id starts live, so the page sees seq 0 on.
      ticker = new Ticker(createPublisher({ redis: fleet.redis.client(), maxLen: 100_000 }), 30);
      const before = await untilPage(page, 'the page never showed 30 events', 15_000, (view) => view.received >= 30);
      const first = relayNamed(before.relay);
      first.service.signal('SIGKILL');
      await waitFor(() => first.service.exitStatus !== undefined, { timeoutMs: 5_000, message: `${first.service.name} outlived SIGKILL` });

      const after = await untilPage(
        page,
        `the page never went on from the other relay after ${first.service.name} was killed`,
        20_000,
        (view) => view.relay !== first.url && view.state === 'live' && view.received >= before.received + 60,
      );
      const second = relayNamed(after.relay);
      expect(second).not.toBe(first);

      const written = await ticker.stop();
      expect(ticker.failures).toEqual([]);
      const final = await untilPage(
        page,
        `the page never showed seq ${written - 1}, the last one written`,
        10_000,
        (view) => view.seqs.at(-1) === written - 1,
      );
      await screenshot(page, 'exampleApp.png');

      // Every event once, in order, across the kill: exactly seq 0 … written-1.
      expect(final.seqs).toEqual(Array.from({ length: written }, (_, seq) => seq));
      expect(final.received).toBe(written);
      expect(final.continuity.replace(/\s+/g, ' ')).toBe('0 / 0');
      expect(final.relay).toBe(second.url);
      // One handover: the events up to the kill came through the first relay, the rest through the other.
      const handover = final.vias.indexOf(second.url);
      expect(handover).toBeGreaterThanOrEqual(before.received);
      expect(final.vias).toEqual([...Array<string>(handover).fill(first.url), ...Array<string>(written - handover).fill(second.url)]);
      expect(pageErrors).toEqual([]);
    } catch (error) {
      await screenshot(page, 'exampleApp-failed.png');
      throw error;
    }
  });
});
