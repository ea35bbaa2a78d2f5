import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { brokenDocRefs, headingAnchors, headingSlug } from './docsLinks.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The contributor documents: the README, CONTRIBUTING.md and docs/, except docs/protocol.md, the
 * wire contract, which changes only with the behaviour it describes (its own links are still
 * targets: an anchor into it that does not exist is reported).
 */
const documents = [
  'README.md',
  'CONTRIBUTING.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md') && name !== 'protocol.md')
    .map((name) => `docs/${name}`),
];

describe('the contributor documents', () => {
  it('link only to files and headings that exist, and name only paths that exist', () => {
    expect(documents).toContain('docs/architecture.md');
    expect(brokenDocRefs(root, documents)).toEqual([]);
  });
});

describe('brokenDocRefs', () => {
  /**
   * Documents in memory: `{ 'docs/a.md': '…' }` under the root `/r`, and other paths that exist.
   * @param {Record<string, string>} docs
   * @param {string[]} [extraPaths]
   */
  const inMemory = (docs, extraPaths = []) => {
    const files = new Map(Object.entries(docs).map(([name, text]) => [join('/r', name), text]));
    const paths = new Set([...files.keys(), ...extraPaths.map((path) => join('/r', path))]);
    return {
      read: (/** @type {string} */ path) => files.get(path) ?? '',
      exists: (/** @type {string} */ path) => paths.has(path),
    };
  };

  it('reports a missing file, a missing heading and a missing backticked path, with their lines', () => {
    const io = inMemory(
      {
        'README.md':
          '# Top\n\nSee [b](docs/b.md), [gone](docs/gone.md) and [c](docs/b.md#nowhere).\n\n`apps/relay/src/Gone.ts` and `apps/relay/src/Here.ts`\n',
        'docs/b.md': '# B\n\n## Real heading\n',
      },
      ['apps/relay/src/Here.ts'],
    );
    expect(brokenDocRefs('/r', ['README.md'], io)).toEqual([
      { file: 'README.md', line: 3, ref: 'docs/gone.md', problem: 'no such file' },
      { file: 'README.md', line: 3, ref: 'docs/b.md#nowhere', problem: 'no heading #nowhere in docs/b.md' },
      { file: 'README.md', line: 5, ref: 'apps/relay/src/Gone.ts', problem: 'no such path in the repository' },
    ]);
  });

  it('accepts existing targets, in-page anchors, URLs, patterns and code blocks', () => {
    const io = inMemory(
      {
        'docs/a.md':
          '# A\n\n## Seams for tests\n\n[up](../README.md#top), [here](#seams-for-tests), [web](https://example.com/x#y)\n\n`test/ingest*.test.ts`, `<file>`, `apps/`\n\n```\n[x](missing.md) `apps/none.ts`\n```\n',
        'README.md': '# Top\n',
      },
      ['apps'],
    );
    expect(brokenDocRefs('/r', ['docs/a.md'], io)).toEqual([]);
  });
});

describe('headingAnchors', () => {
  it('makes GitHub anchors, numbering repeated headings', () => {
    expect(headingSlug('10. Relay tokens (JWT)')).toBe('10-relay-tokens-jwt');
    expect(headingSlug('The live message: an entry that travels with its write')).toBe(
      'the-live-message-an-entry-that-travels-with-its-write',
    );
    expect(headingSlug('relay (`apps/relay`)')).toBe('relay-appsrelay');
    expect([...headingAnchors('# A\n## Usage\n```\n# not a heading\n```\n## Usage\n')]).toEqual(['a', 'usage', 'usage-1']);
  });
});
