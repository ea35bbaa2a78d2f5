import { mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { watchTextFile } from './watchTextFile.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'watch-text-'));
  dirs.push(dir);
  return dir;
}

describe('watchTextFile', () => {
  it('reports a rewritten file once per new content, not on a rewrite with the same text', async () => {
    const dir = tempDir();
    const path = join(dir, 'keys.json');
    writeFileSync(path, 'one');
    const seen: string[] = [];
    const watch = watchTextFile(path, {
      initial: 'one',
      pollMs: 60_000,
      debounceMs: 20,
      onText: (t) => seen.push(t),
      onError: () => undefined,
    });
    try {
      writeFileSync(path, 'one');
      writeFileSync(path, 'two');
      await waitFor(() => seen.length === 1, { timeoutMs: 5_000, message: 'the change was not reported' });
      expect(seen).toEqual(['two']);
    } finally {
      watch.close();
    }
  });

  it('follows a Kubernetes-style symlink swap', async () => {
    const dir = tempDir();
    const v1 = join(dir, '..v1');
    const v2 = join(dir, '..v2');
    writeFileSync(join(dir, 'v1'), 'first');
    writeFileSync(join(dir, 'v2'), 'second');
    symlinkSync(join(dir, 'v1'), v1);
    symlinkSync(join(dir, 'v2'), v2);
    symlinkSync('..v1', join(dir, '..data'));
    symlinkSync(join('..data'), join(dir, 'keys.json'));
    const seen: string[] = [];
    const watch = watchTextFile(join(dir, 'keys.json'), {
      initial: 'first',
      pollMs: 60_000,
      debounceMs: 20,
      onText: (t) => seen.push(t),
      onError: () => undefined,
    });
    try {
      symlinkSync('..v2', join(dir, '..data_tmp'));
      renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
      await waitFor(() => seen.length === 1, { timeoutMs: 5_000, message: 'the swap was not reported' });
      expect(seen).toEqual(['second']);
    } finally {
      watch.close();
    }
  });

  it('reports a file that cannot be read and keeps following it', async () => {
    const dir = tempDir();
    const path = join(dir, 'keys.json');
    writeFileSync(path, 'one');
    const seen: string[] = [];
    const errors: Error[] = [];
    const watch = watchTextFile(path, {
      initial: 'one',
      pollMs: 50,
      debounceMs: 10,
      onText: (t) => seen.push(t),
      onError: (e) => errors.push(e),
    });
    try {
      rmSync(path);
      await waitFor(() => errors.length > 0, { timeoutMs: 5_000, message: 'no error for a missing file' });
      writeFileSync(path, 'two');
      await waitFor(() => seen.length === 1, { timeoutMs: 5_000, message: 'the poll never saw the new file' });
      expect(seen).toEqual(['two']);
    } finally {
      watch.close();
    }
  });
});
