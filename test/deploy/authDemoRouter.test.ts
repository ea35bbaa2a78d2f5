import { describe, expect, it } from 'vitest';
import { Deployment } from 'kubernetes-models/apps/v1';
import { ConfigMap } from 'kubernetes-models/v1';
import { parseAuthConfig } from '@streamgate/auth';
import { named, ofKind } from './loadManifests.js';
import { containerOf, loadOverlay, overlays } from './loadOverlay.js';
import { resolveEnv, withSecretSamples } from './resolveEnv.js';

describe.each(overlays)('the $name overlay deploys auth as the JWKS service the backend guide describes', (overlay) => {
  it('never serves the demo router, shows no stack traces and sends no CORS headers', () => {
    const rendered = loadOverlay(overlay.name);
    const env = resolveEnv(containerOf(named(rendered.manifests, Deployment, 'auth'), 'auth'), ofKind(rendered.manifests, ConfigMap));
    expect(env.errors).toEqual([]);
    expect(env.values.AUTH_DEMO_ROUTER).toBe('false');
    expect(env.values.NODE_ENV).toBe('production');
    const parsed = parseAuthConfig(withSecretSamples(env));
    expect(parsed.ok ? 'ok' : parsed.error.message).toBe('ok');
    if (!parsed.ok) return;
    expect(parsed.config).toMatchObject({ demoRouter: false, exposeStackTraces: false, cors: null });
    // ops.token is on only once the operator creates the credential hash's Secret.
    expect(env.secrets.AUTH_OPERATOR_CREDENTIAL_SHA256).toEqual({ secret: 'ops-operator', key: 'sha256', optional: true });
    // Turning it on in the manifests would stop every auth pod at boot rather than hand out tokens.
    expect(parseAuthConfig({ ...withSecretSamples(env), AUTH_DEMO_ROUTER: 'true' }).ok).toBe(false);
  });
});
