import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Broken references in Markdown documents: relative links whose file (or, for a Markdown target,
 * heading anchor) does not exist, and backticked repository paths (`apps/relay/src/Session.ts`)
 * that name nothing. Docs that name a moved file mislead the next contributor more than docs that
 * name none, so the contributor documents are checked by a unit test (docsLinks.test.mjs).
 */

/** Top-level directories and files whose backticked mention is taken to be a path in this repo. */
const PATH_ROOTS = /^(apps|packages|test|scripts|docs|deploy|examples|\.ci)\//;
const ROOT_FILES = new Set(['package.json', 'pnpm-workspace.yaml', 'pnpm-lock.yaml', 'vitest.config.ts', '.nvmrc', '.prettierignore']);
/** A mention with these is a pattern or a placeholder (`test/ingest*.test.ts`, `<file>`), not a path. */
const NOT_A_PATH = /[*<>…{}$ ]/;

/** @typedef {{ file: string, line: number, ref: string, problem: string }} BrokenRef */

/**
 * Markdown without its fenced code blocks (their text is code, not links), line numbers kept.
 * @param {string} text
 * @returns {string}
 */
export function withoutFences(text) {
  let inFence = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line;
    })
    .join('\n');
}

/**
 * GitHub's anchor for a heading: lowercased, punctuation dropped, each space a hyphen.
 * @param {string} heading
 * @returns {string}
 */
export function headingSlug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/**
 * Every anchor a Markdown document has, with GitHub's `-1`, `-2` for repeated headings.
 * @param {string} text
 * @returns {Set<string>}
 */
export function headingAnchors(text) {
  /** @type {Set<string>} */
  const anchors = new Set();
  /** @type {Map<string, number>} */
  const seen = new Map();
  for (const line of withoutFences(text).split('\n')) {
    const match = /^#{1,6}\s+(.*)$/.exec(line);
    if (!match) continue;
    const slug = headingSlug(match[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * The broken references of `files` (paths relative to `root`). `read` is injectable so the
 * checker itself can be tested on documents that do not exist on disk.
 * @param {string} root
 * @param {string[]} files
 * @param {{ read?: (path: string) => string, exists?: (path: string) => boolean }} [io]
 * @returns {BrokenRef[]}
 */
export function brokenDocRefs(root, files, io = {}) {
  const read = io.read ?? ((/** @type {string} */ path) => readFileSync(path, 'utf8'));
  const exists = io.exists ?? existsSync;
  /** @type {Map<string, Set<string>>} */
  const anchorsOf = new Map();
  /** @param {string} path */
  const anchors = (path) => {
    const known = anchorsOf.get(path);
    if (known) return known;
    const found = headingAnchors(read(path));
    anchorsOf.set(path, found);
    return found;
  };
  /** @type {BrokenRef[]} */
  const broken = [];
  for (const file of files) {
    const path = join(root, file);
    const lines = withoutFences(read(path)).split('\n');
    lines.forEach((text, index) => {
      /** @param {string} ref @param {string} problem */
      const report = (ref, problem) => broken.push({ file, line: index + 1, ref, problem });
      for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue;
        const [pathPart = '', anchor] = target.split('#');
        const resolved = pathPart === '' ? path : resolve(dirname(path), pathPart);
        if (!exists(resolved)) {
          report(target, 'no such file');
          continue;
        }
        if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
          report(target, `no heading #${anchor} in ${relative(root, resolved)}`);
        }
      }
      for (const [, code = ''] of text.matchAll(/`([^`]+)`/g)) {
        const mention = code.replace(/[.,:;]$/, '');
        const isPath = (PATH_ROOTS.test(mention) || ROOT_FILES.has(mention)) && !NOT_A_PATH.test(mention);
        if (isPath && !exists(join(root, mention.replace(/\/$/, '')))) report(mention, 'no such path in the repository');
      }
    });
  }
  return broken;
}
