import { describe, expect, it } from 'vitest';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap } from 'kubernetes-models/v1';
import { parseAuthConfig } from '@streamgate/auth';
import { named, ofKind } from './loadManifests.js';
import { containerOf, loadOverlay, overlays } from './loadOverlay.js';
import { resolveEnv } from './resolveEnv.js';

describe.each(overlays)('the $name overlay deploys auth as the JWKS service the backend guide describes', (overlay) => {
  it('never serves the demo router, shows no stack traces and sends no CORS headers', () => {
    const rendered = loadOverlay(overlay.name);
    const env = resolveEnv(containerOf(named(rendered.manifests, Deployment, 'auth'), 'auth'), ofKind(rendered.manifests, ConfigMap));
    expect(env.errors).toEqual([]);
    expect(env.values.AUTH_DEMO_ROUTER).toBe('false');
    expect(env.values.NODE_ENV).toBe('production');
    const secrets = Object.fromEntries(Object.keys(env.secrets).map((name) => [name, '<secret>']));
    const parsed = parseAuthConfig({ ...env.values, ...secrets });
    expect(parsed.ok ? 'ok' : parsed.error.message).toBe('ok');
    if (!parsed.ok) return;
    expect(parsed.config).toMatchObject({ demoRouter: false, exposeStackTraces: false, cors: null });
    // Turning it on in the manifests would stop every auth pod at boot rather than hand out tokens.
    expect(parseAuthConfig({ ...env.values, ...secrets, AUTH_DEMO_ROUTER: 'true' }).ok).toBe(false);
  });
});
