import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

/** Debian's `chromium` package; `STREAMGATE_CHROMIUM` names another Chromium or Chrome binary. */
export function chromiumPath(): string {
  const override = process.env.STREAMGATE_CHROMIUM;
  return override === undefined || override.trim() === '' ? '/usr/bin/chromium' : override;
}

/** What to do when the browser is missing; scripts/bootstrap.mjs prints the same. */
export const CHROMIUM_INSTALL_HINT =
  'Chromium is required for the browser tests (driven by playwright-core, which downloads no browser).\n' +
  '  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y chromium\n' +
  '  (node scripts/bootstrap.mjs does this by itself when run as root on Debian)\n' +
  '  Elsewhere: install Chromium or Chrome and set STREAMGATE_CHROMIUM to its executable.';

// No sandbox: CI and containers run as root, where Chromium refuses its sandbox. The rest keeps
// the browser from reaching anything but the test's own servers on loopback.
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface StartChromiumOptions {
  /** Default `chromiumPath()`. */
  executablePath?: string;
  /** Default 30 000 ms. */
  launchTimeoutMs?: number;
  /** Default 1280 × 800. */
  viewport?: { width: number; height: number };
}

export interface ChromiumBrowser extends AsyncDisposable {
  /** A persistent context in a fresh user-data directory: no profile, cache or cookies carried over. */
  readonly context: BrowserContext;
  /** The tab Chromium opened at launch. */
  readonly page: Page;
  readonly userDataDir: string;
  /** Closes the browser and deletes its user-data directory; safe to call twice. */
  close(): Promise<void>;
}

/**
 * Headless Chromium from the machine's own binary, never a downloaded build. Fails at once, with
 * what to install, when the binary is missing.
 */
export async function startChromium(options: StartChromiumOptions = {}): Promise<ChromiumBrowser> {
  const executablePath = options.executablePath ?? chromiumPath();
  if (!existsSync(executablePath)) throw new Error(`${executablePath} does not exist.\n${CHROMIUM_INSTALL_HINT}`);
  // Loaded here, not at the top: most tests that import the testkit never start a browser.
  const { chromium } = await import('playwright-core');
  const userDataDir = await mkdtemp(join(tmpdir(), 'streamgate-chromium-'));
  let context: BrowserContext;
  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: ARGS,
      timeout: options.launchTimeoutMs ?? 30_000,
      viewport: options.viewport ?? { width: 1280, height: 800 },
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw new Error(`Chromium (${executablePath}) did not start: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  const page = context.pages()[0] ?? (await context.newPage());
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= context.close().finally(() => rm(userDataDir, { recursive: true, force: true }));
    return closing;
  };
  return { context, page, userDataDir, close, [Symbol.asyncDispose]: close };
}
