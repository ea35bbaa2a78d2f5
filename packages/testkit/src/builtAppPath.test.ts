import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtAppPath } from './builtAppPath.js';
import { repoRoot } from './repoRoot.js';

describe('builtAppPath', () => {
  it('maps each app entry to its bundle, and anything else to none (it then runs from source)', () => {
    expect(builtAppPath('/b', join(repoRoot(), 'apps/relay/src/main.ts'))).toBe('/b/relay.mjs');
    expect(builtAppPath('/b', join(repoRoot(), 'apps/ingest/src/main.ts'))).toBe('/b/ingest.mjs');
    expect(builtAppPath('/b', join(repoRoot(), 'scripts/fleet.ts'))).toBeUndefined();
  });
});
