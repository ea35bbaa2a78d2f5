import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { waitFor } from '@streamgate/testkit';

export interface DashboardChainRow {
  stream: string;
  /** `[data-field]` → text: state, provider, head, lastWritten, failovers, gaps, reorgs, chain. */
  fields: Record<string, string>;
}

export interface DashboardVenueRow {
  venue: string;
  wanted: string;
  /** `connected` as the attribute reads: `yes` | `no`. */
  sessions: { id: string; symbols: number; connected: string }[];
  /** Covered symbols by kind. */
  coverage: Record<string, number>;
}

export interface DashboardCard {
  pod: string;
  kind: string;
  /** live | stale | draining | drained */
  state: string;
  /** A relay's `[data-testid="drain"]` `data-active` (`yes` | `no`), null without a drain panel. */
  drainActive: string | null;
  /** The card's own `[data-field]` figures → text (not those of its chain and venue rows). */
  fields: Record<string, string>;
  readModes: Record<string, string>;
  refusals: Record<string, number>;
  chains: DashboardChainRow[];
  venues: DashboardVenueRow[];
}

export interface DashboardView {
  feedState: string;
  feedError: string | null;
  /** The header's stream position: its label and the last entry id. */
  feedPositionLabel: string | null;
  feedPosition: string | null;
  /**
   * Every `data-*` attribute on the page that reads `true` or `false`, as `<attribute>=<value>`:
   * the contract says booleans read `yes` / `no`, so this is empty.
   */
  trueFalseAttributes: string[];
  snapshots: number;
  badEntries: number;
  badEntryLast: string | null;
  credentialRefused: string | null;
  cards: DashboardCard[];
  /** `data-testid` of each chart → its series labels and how many x values it draws. */
  charts: Record<string, { series: string[]; points: number }>;
}

/**
 * Everything the operations dashboard shows, read from its DOM contract in one evaluation
 * (docs in apps/dashboard/README.md): what a test asserts is what an operator sees.
 */
export function readDashboard(page: Page): Promise<DashboardView> {
  return page.evaluate(() => {
    const text = (root: ParentNode, selector: string): string | null => root.querySelector(selector)?.textContent ?? null;
    const inRow = (el: Element) => el.closest('[data-testid="chain-stream"], [data-testid="venue"]') !== null;
    const counts = (root: Element | null, attribute: string): Record<string, number> =>
      Object.fromEntries(
        Array.from(root?.querySelectorAll(`[${attribute}]`) ?? []).map((li) => [
          li.getAttribute(attribute) ?? '',
          Number(li.getAttribute('data-value')),
        ]),
      );
    const cards = Array.from(document.querySelectorAll('[data-testid="pod-card"]')).map((card) => {
      const fields: Record<string, string> = {};
      for (const el of Array.from(card.querySelectorAll('[data-field]'))) {
        const name = el.getAttribute('data-field') ?? '';
        if (!inRow(el) && !(name in fields)) fields[name] = el.textContent ?? '';
      }
      return {
        pod: card.getAttribute('data-pod') ?? '',
        kind: card.getAttribute('data-kind') ?? '',
        state: card.getAttribute('data-state') ?? '',
        drainActive: card.querySelector('[data-testid="drain"]')?.getAttribute('data-active') ?? null,
        fields,
        readModes: Object.fromEntries(
          Array.from(card.querySelectorAll('[data-field="readMode"] [data-target]')).map((li) => [
            li.getAttribute('data-target') ?? '',
            li.getAttribute('data-mode') ?? '',
          ]),
        ),
        refusals: counts(card.querySelector('[data-field="refusals"]'), 'data-reason'),
        chains: Array.from(card.querySelectorAll('[data-testid="chain-stream"]')).map((row) => ({
          stream: row.getAttribute('data-stream') ?? '',
          fields: Object.fromEntries(
            Array.from(row.querySelectorAll('[data-field]')).map((td) => [td.getAttribute('data-field') ?? '', td.textContent ?? '']),
          ),
        })),
        venues: Array.from(card.querySelectorAll('[data-testid="venue"]')).map((row) => ({
          venue: row.getAttribute('data-venue') ?? '',
          wanted: text(row, '[data-field="wanted"]') ?? '',
          sessions: Array.from(row.querySelectorAll('[data-testid="venue-session"]')).map((li) => ({
            id: li.getAttribute('data-session') ?? '',
            symbols: Number(li.getAttribute('data-symbols')),
            connected: li.getAttribute('data-connected') ?? '',
          })),
          coverage: counts(row.querySelector('[data-field="coverage"]'), 'data-coverage-kind'),
        })),
      };
    });
    const charts = Object.fromEntries(
      Array.from(document.querySelectorAll('.chart[data-testid]')).map((el) => [
        el.closest('[data-testid="pod-card"]') === null
          ? (el.getAttribute('data-testid') ?? '')
          : `${el.closest('[data-testid="pod-card"]')?.getAttribute('data-pod') ?? ''}/${el.getAttribute('data-testid') ?? ''}`,
        {
          series: (el.getAttribute('data-series') ?? '').split(',').filter((s) => s !== ''),
          points: Number(el.getAttribute('data-points')),
        },
      ]),
    );
    return {
      feedState: text(document, '[data-testid="feed-state"]') ?? '',
      feedError: text(document, '[data-testid="feed-error"]'),
      feedPositionLabel: text(document, '[data-testid="feed-position-label"]'),
      feedPosition: text(document, '[data-testid="feed-position"]'),
      trueFalseAttributes: Array.from(document.querySelectorAll('*')).flatMap((el) =>
        Array.from(el.attributes)
          .filter((a) => a.name.startsWith('data-') && (a.value === 'true' || a.value === 'false'))
          .map((a) => `${a.name}=${a.value}`),
      ),
      snapshots: Number(text(document, '[data-testid="snapshots-received"]') ?? 'NaN'),
      badEntries: Number(text(document, '[data-testid="bad-entries"]') ?? 'NaN'),
      badEntryLast: text(document, '[data-testid="bad-entry-last"]'),
      credentialRefused: text(document, '[data-testid="credential-refused"]'),
      cards,
      charts,
    };
  });
}

export function cardOf(view: DashboardView, pod: string): DashboardCard | undefined {
  return view.cards.find((c) => c.pod === pod);
}

/** The card of `pod`, or a failure naming the pods the page does show. */
export function requireCard(view: DashboardView, pod: string): DashboardCard {
  const found = cardOf(view, pod);
  if (found === undefined) throw new Error(`the page shows no card for ${pod}: ${view.cards.map((c) => c.pod).join(', ')}`);
  return found;
}

/**
 * Waits until the page shows what `check` wants. At the deadline it fails with what the page
 * showed last and with `context()` (page errors, process output: whatever explains it).
 */
export async function untilDashboard(
  page: Page,
  options: { what: string; timeoutMs: number; intervalMs: number; context: () => string },
  check: (view: DashboardView) => boolean,
): Promise<DashboardView> {
  let last: DashboardView | undefined;
  try {
    return await waitFor(
      async () => {
        last = await readDashboard(page);
        return check(last) && last;
      },
      { timeoutMs: options.timeoutMs, intervalMs: options.intervalMs, message: options.what },
    );
  } catch (error) {
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}\nthe page showed: ${JSON.stringify(last, null, 1)}\n${options.context()}`,
      { cause: error },
    );
  }
}

/** A full-page screenshot into `dir` (created if missing); returns its path. */
export async function saveDashboardScreenshot(page: Page, dir: string, name: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, name);
  await page.screenshot({ path, fullPage: true, timeout: 10_000 });
  console.log(`dashboard screenshot: ${path}`);
  return path;
}
