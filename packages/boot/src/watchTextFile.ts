import { watch } from 'node:fs';
import type { FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export interface WatchTextFileOptions {
  /** The text the caller already loaded: only a different text is reported. */
  readonly initial: string;
  /** Re-read at least this often, whatever the file system reports. */
  readonly pollMs: number;
  /** Quiet time after a change event before the file is read (editors and kubelet write in steps). */
  readonly debounceMs?: number;
  /** The file now holds `text`, different from the last text reported. */
  readonly onText: (text: string) => void;
  /** The file could not be read, or the file system cannot be watched (polling goes on). */
  readonly onError: (error: Error) => void;
}

export interface TextFileWatch {
  close(): void;
}

/**
 * Follows a file that is replaced while a process runs (a key file, a mounted Secret). The
 * directory is watched, not the file: Kubernetes swaps a mounted Secret by renaming a symlink
 * beside it, which a watch on the old file never reports. Watch events are not guaranteed on
 * every file system (network mounts, some containers), so a poll backs them up; either way the
 * content decides, so a touch without a change reports nothing.
 */
export function watchTextFile(path: string, options: WatchTextFileOptions): TextFileWatch {
  const debounceMs = options.debounceMs ?? 100;
  let last = options.initial;
  let closed = false;
  let reading = false;
  let again = false;
  let debounce: NodeJS.Timeout | null = null;

  const check = async (): Promise<void> => {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    try {
      const text = await readFile(path, 'utf8');
      if (!closed && text !== last) {
        last = text;
        options.onText(text);
      }
    } catch (error) {
      if (!closed) options.onError(error instanceof Error ? error : new Error(String(error)));
    } finally {
      reading = false;
      if (again) {
        again = false;
        void check();
      }
    }
  };
  const soon = (): void => {
    if (debounce !== null) clearTimeout(debounce);
    debounce = setTimeout(() => {
      debounce = null;
      void check();
    }, debounceMs);
    debounce.unref();
  };

  let watcher: FSWatcher | null = null;
  try {
    const name = basename(path);
    watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      // Kubernetes renames `..data`, not the file; anything in the directory may be the change.
      if (file === null || file === name || file.startsWith('..')) soon();
    });
    watcher.on('error', (error) => options.onError(error));
  } catch (error) {
    options.onError(error instanceof Error ? error : new Error(String(error)));
  }
  const poll = setInterval(() => void check(), options.pollMs);
  poll.unref();

  return {
    close: () => {
      closed = true;
      clearInterval(poll);
      if (debounce !== null) clearTimeout(debounce);
      watcher?.close();
    },
  };
}
