import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/** The directory given as the built page holds none: the image was built without it, or the path is wrong. */
export class DashboardPageMissingError extends Error {
  readonly code = 'page_missing';
  readonly retryable = false;
  constructor(readonly pageDir: string) {
    super(
      `no built dashboard page in ${pageDir} (its index.html is missing); build it with \`pnpm --filter @streamgate/dashboard build\` (the image's build stage does)`,
    );
  }
}

/** Whether `pageDir` holds a built page (its index.html); looks only, never builds one. */
export async function hasBuiltPage(pageDir: string): Promise<boolean> {
  try {
    return (await stat(join(pageDir, 'index.html'))).isFile();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return false;
    throw error;
  }
}
