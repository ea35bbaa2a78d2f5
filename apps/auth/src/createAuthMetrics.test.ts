import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createAuthMetrics } from './createAuthMetrics.js';

/** Registered by main.ts, which owns the fault policy and the keys file watch. */
const REGISTERED_BY_MAIN = ['streamgate_auth_faults_total', 'streamgate_auth_signing_key_reloads_total'];

describe('createAuthMetrics catalogue', () => {
  it('lists every metric of the auth service in apps/auth/README.md, and no other', async () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const documented = [...readme.matchAll(/^\| `(streamgate_auth_[a-z_]+)` \|/gm)].map((m) => m[1]);
    const registered = (await createAuthMetrics().registry.getMetricsAsJSON()).map((m) => m.name);
    expect([...documented].sort()).toEqual([...registered, ...REGISTERED_BY_MAIN].sort());
    const main = readFileSync(new URL('./main.ts', import.meta.url), 'utf8');
    for (const name of REGISTERED_BY_MAIN) expect(main).toContain(`name: '${name}'`);
  });
});
