import { beforeAll, describe, expect, it } from 'vitest';
import { Deployment } from 'kubernetes-models/apps/v1';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { ConfigMap, Service } from 'kubernetes-models/v1';
import type { INetworkPolicyPeer } from 'kubernetes-models/networking.k8s.io/v1/NetworkPolicyPeer';
import { parseAuthConfig } from '@streamgate/auth';
import { dashboardEnvSchema, parseDashboardEnv } from '@streamgate/dashboard/config';
import { normalizeRedisTarget, parseRedisTarget } from '@streamgate/protocol';
import { ingestConfigSchema } from '@streamgate/ingest';
import { parseRelayConfig, relayConfigSchema } from '@streamgate/relay';
import { named, ofKind } from './loadManifests.js';
import { APPS, containerOf, overlays, podSpecOf, loadOverlay } from './loadOverlay.js';
import type { RenderedOverlay } from './loadOverlay.js';
import { resolveEnv, withSecretSamples } from './resolveEnv.js';
import type { ResolvedEnv } from './resolveEnv.js';

const DNS_PORT = 53;

/** The variable names a config schema reads: its object's keys, through any refine/transform pipe. */
function inputKeys(schema: unknown): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  if ('shape' in schema && typeof schema.shape === 'object' && schema.shape !== null) return Object.keys(schema.shape);
  return 'in' in schema ? inputKeys(schema.in) : [];
}

type Labels = Record<string, string>;

/** Whether a label selector matches these labels (matchExpressions are not used here: refuse them). */
function selects(selector: { matchLabels?: Labels; matchExpressions?: unknown[] } | undefined, labels: Labels): boolean {
  if (selector === undefined) return false;
  if ((selector.matchExpressions ?? []).length > 0) throw new Error('matchExpressions: extend selects() before using them');
  return Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
}

const podLabels = (deployment: Deployment): Labels => deployment.spec?.template.metadata?.labels ?? {};

/** The relay's parsed config; a refusal fails the test with every problem in its message. */
function relayConfigOf(env: Record<string, string>) {
  const result = parseRelayConfig(env);
  if (!result.ok) throw new Error(result.error.message);
  return result.config;
}

/** Env as the process will see it, Secrets replaced by samples or placeholders (their values are not ours to know). */
function processEnv(env: ResolvedEnv): Record<string, string> {
  return withSecretSamples(env);
}

/** The pod port a Service port leads to (NetworkPolicies see pod ports, after the Service's DNAT). */
function podPortBehind(service: Service, servicePort: number, backend: Deployment): number {
  const port = service.spec?.ports?.find((p) => p.port === servicePort);
  if (port === undefined) throw new Error(`Service ${String(service.metadata?.name)} has no port ${servicePort}`);
  const target = port.targetPort ?? servicePort;
  const containerPorts = podSpecOf(backend).containers.flatMap((c) => c.ports ?? []);
  const match = containerPorts.find((p) => p.name === target || p.containerPort === target);
  if (match === undefined) throw new Error(`Service ${String(service.metadata?.name)} targets ${target}, which no container declares`);
  return match.containerPort;
}

const urlPort = (url: URL, fallback: number): number => (url.port === '' ? fallback : Number(url.port));

describe.each(overlays)('deploy/overlays/$name wiring', (overlay) => {
  let rendered: RenderedOverlay;
  const envOf = (app: string): ResolvedEnv => {
    const env = resolveEnv(containerOf(named(rendered.manifests, Deployment, app), app), ofKind(rendered.manifests, ConfigMap));
    expect(env.errors, app).toEqual([]);
    return env;
  };
  beforeAll(() => {
    rendered = loadOverlay(overlay.name);
  });

  it("boots: each app's config schema accepts the environment the manifests give it", () => {
    const relayEnv = processEnv(envOf('relay'));
    const relay = parseRelayConfig(relayEnv);
    expect(relay.ok ? 'ok' : relay.error.message).toBe('ok');
    const known = new Set(inputKeys(relayConfigSchema));
    expect(known.has('RELAY_PORT'), 'the relay schema exposes its variable names').toBe(true);
    const unknown = Object.keys(relayEnv).filter((n) => n.startsWith('RELAY_') && !known.has(n));
    expect(unknown, 'RELAY_* variables the relay does not read (typos?)').toEqual([]);
    const auth = parseAuthConfig(processEnv(envOf('auth')));
    expect(auth.ok ? 'ok' : auth.error.message).toBe('ok');
    // Ingest's topology and Redis URL come from Secrets, which the manifests only reference.
    const ingestEnv = envOf('ingest');
    const ingest = ingestConfigSchema.safeParse(processEnv(ingestEnv));
    const ingestIssues = ingest.success ? [] : ingest.error.issues.filter((i) => !(String(i.path[0]) in ingestEnv.secrets));
    expect(ingestIssues.map((i) => `${String(i.path[0])}: ${i.message}`)).toEqual([]);
    const ingestKnown = new Set(inputKeys(ingestConfigSchema));
    expect(Object.keys(processEnv(ingestEnv)).filter((n) => n.startsWith('INGEST_') && !ingestKnown.has(n))).toEqual([]);
  });

  it('has auth and the relays agree on issuer, audience and Redis, and ingest write where tokens point', () => {
    const relay = relayConfigOf(processEnv(envOf('relay')));
    const auth = parseAuthConfig(processEnv(envOf('auth')));
    if (!auth.ok) throw new Error(auth.error.message);
    expect(relay.RELAY_TOKEN_ISSUER).toBe(auth.config.issuer);
    expect(relay.RELAY_TOKEN_AUDIENCE).toBe(auth.config.audience);
    for (const target of auth.config.redisTargets) expect([...relay.RELAY_REDIS_ALLOWLIST]).toContain(target);
    expect(
      auth.config.redisTargets.map((t) => parseRedisTarget(t)?.kind),
      'the Redis tokens name',
    ).toEqual([overlay.streams]);
    const ingest = envOf('ingest');
    const ingestRedis = ingest.values.INGEST_REDIS_URL;
    if (ingestRedis === undefined) {
      // With credentials the URL is a Secret (prod); then the settings cannot be compared here.
      expect(ingest.secrets.INGEST_REDIS_URL?.secret, 'INGEST_REDIS_URL comes from the settings or a Secret').toBe('ingest-redis');
    } else {
      expect([normalizeRedisTarget(ingestRedis)]).toEqual(auth.config.redisTargets);
    }
    // Relays heartbeat demand under the prefixes ingest serves, or ingest never subscribes upstream;
    // ingest is told the same prefixes, to warn at boot about topology streams outside them.
    expect(envOf('relay').values.RELAY_DEMAND_PREFIXES).toBeTruthy();
    expect(ingest.values.INGEST_DEMAND_PREFIXES).toBe(envOf('relay').values.RELAY_DEMAND_PREFIXES);
    // Every pod writes its operations snapshot where the dashboard reads it through the relays,
    // and ops tokens name that same target.
    const opsTarget = auth.config.ops?.target;
    expect(opsTarget, 'auth publishes operations snapshots').toBeDefined();
    expect([...relay.RELAY_REDIS_ALLOWLIST]).toContain(opsTarget);
    expect(normalizeRedisTarget(relay.RELAY_OPS_REDIS_URL ?? '')).toBe(opsTarget);
    expect(relay.RELAY_OPS_STREAM).toBe(auth.config.ops?.stream);
    const authPrefixes = envOf('auth').values.AUTH_DEMAND_PREFIXES;
    if (authPrefixes !== undefined) expect(authPrefixes).toBe(envOf('relay').values.RELAY_DEMAND_PREFIXES);
  });

  it("publishes ingest's operations snapshots into the Redis its streams go to, which the relays read", () => {
    const ingest = envOf('ingest');
    const ops = ingest.values.INGEST_OPS_REDIS_URL;
    const streams = ingest.values.INGEST_REDIS_URL;
    if (ops === undefined || streams === undefined) {
      // With credentials the URLs come from Secrets (prod): the same one when the operations stream
      // lives on the streams' Redis; its own when the streams are on a Redis Cluster and the
      // operations stream stays on a standalone Redis (OPS_REDIS_URL, deploy/components/redis-cluster).
      expect(ingest.secrets.INGEST_OPS_REDIS_URL, 'INGEST_OPS_REDIS_URL is set').toBeDefined();
      // The relays' ops URL is OPS_REDIS_URL, auth's token target REDIS_URL, both from the settings.
      const opsTarget = normalizeRedisTarget(envOf('relay').values.RELAY_OPS_REDIS_URL ?? '');
      if (opsTarget === normalizeRedisTarget(envOf('auth').values.AUTH_REDIS_URL ?? ''))
        expect(ingest.secrets.INGEST_OPS_REDIS_URL).toEqual(ingest.secrets.INGEST_REDIS_URL);
      else expect(ingest.secrets.INGEST_OPS_REDIS_URL?.secret).not.toBe(ingest.secrets.INGEST_REDIS_URL?.secret);
    } else {
      expect(normalizeRedisTarget(ops)).toBe(normalizeRedisTarget(streams));
      expect([...relayConfigOf(processEnv(envOf('relay'))).RELAY_REDIS_ALLOWLIST]).toContain(normalizeRedisTarget(ops));
    }
  });

  it('gives ingest its topology (provider URLs may carry API keys) as a mounted Secret file', () => {
    const ingest = named(rendered.manifests, Deployment, 'ingest');
    const path = envOf('ingest').values.INGEST_TOPOLOGY_FILE ?? '';
    expect(envOf('ingest').values.INGEST_TOPOLOGY, 'inline topology would put provider keys in the manifest').toBeUndefined();
    const mount = containerOf(ingest, 'ingest').volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
    expect(
      podSpecOf(ingest).volumes?.find((v) => v.name === mount?.name)?.secret?.secretName,
      `${path} must be in a mounted Secret`,
    ).toBeDefined();
    expect(mount?.readOnly).toBe(true);
  });

  it('keeps the signing key in auth, from a Secret mounted as a file; relays get only the JWKS URL', () => {
    const authDeployment = named(rendered.manifests, Deployment, 'auth');
    const auth = parseAuthConfig(processEnv(envOf('auth')));
    if (!auth.ok) throw new Error(auth.error.message);
    expect(auth.config.signingKeys.kind).toBe('file');
    const keyPath = auth.config.signingKeys.kind === 'file' ? auth.config.signingKeys.path : '';
    const mount = containerOf(authDeployment, 'auth').volumeMounts?.find((m) => keyPath.startsWith(`${m.mountPath}/`));
    const volume = podSpecOf(authDeployment).volumes?.find((v) => v.name === mount?.name);
    expect(volume?.secret?.secretName, `${keyPath} must be in a mounted Secret`).toBeDefined();
    expect(mount?.readOnly).toBe(true);
    expect(envOf('auth').values.NODE_ENV, 'production refuses generated keys').toBe('production');

    const relayDeployment = named(rendered.manifests, Deployment, 'relay');
    const relayEnv = envOf('relay');
    expect(podSpecOf(relayDeployment).volumes?.filter((v) => v.secret !== undefined || v.projected !== undefined) ?? []).toEqual([]);
    expect(Object.keys(relayEnv.secrets), 'relays hold Redis credentials, nothing else secret').toEqual(
      Object.keys(relayEnv.secrets).filter((n) => n.startsWith('RELAY_REDIS_')),
    );
    expect(Object.keys({ ...relayEnv.values, ...relayEnv.secrets }).filter((n) => n.startsWith('AUTH_'))).toEqual([]);
    expect(relayEnv.values.RELAY_JWKS_FILE).toBeUndefined();
    const jwks = new URL(relayEnv.values.RELAY_JWKS_URL ?? '');
    expect(jwks.pathname).toBe('/.well-known/jwks.json');
    const authService = named(rendered.manifests, Service, jwks.hostname.split('.')[0] ?? '');
    expect(selects({ matchLabels: authService.spec?.selector ?? {} }, podLabels(authDeployment))).toBe(true);
    expect(() => podPortBehind(authService, urlPort(jwks, 80), authDeployment)).not.toThrow();
  });

  it('denies by default, lets relays reach only Redis, the JWKS and cluster DNS, and auth only Redis and DNS', () => {
    const policies = ofKind(rendered.manifests, NetworkPolicy);
    const denyAll = named(rendered.manifests, NetworkPolicy, 'default-deny');
    expect(denyAll.spec?.podSelector, 'selects every pod').toEqual({});
    expect(denyAll.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(denyAll.spec?.ingress ?? []).toEqual([]);
    expect(denyAll.spec?.egress ?? []).toEqual([]);

    const relayDeployment = named(rendered.manifests, Deployment, 'relay');
    const authDeployment = named(rendered.manifests, Deployment, 'auth');
    const relayConfig = relayConfigOf(processEnv(envOf('relay')));
    const jwks = new URL(relayConfig.RELAY_JWKS_URL ?? '');
    const jwksPort = podPortBehind(
      named(rendered.manifests, Service, jwks.hostname.split('.')[0] ?? ''),
      urlPort(jwks, 80),
      authDeployment,
    );
    const redisPorts = new Set([...relayConfig.RELAY_REDIS_ALLOWLIST].map((t) => urlPort(new URL(t), 6379)));
    const redisDeployments = ofKind(rendered.manifests, Deployment).filter((d) => podLabels(d)['app.kubernetes.io/name'] === 'redis');

    const relayPolicies = policies.filter(
      (p) => Object.keys(p.spec?.podSelector.matchLabels ?? {}).length > 0 && selects(p.spec?.podSelector, podLabels(relayDeployment)),
    );
    expect(relayPolicies.map((p) => p.metadata?.name)).toEqual(['relay']);
    const egress = relayPolicies[0]?.spec?.egress ?? [];
    const allowedPorts = new Set<number>();
    const isRedisPeer = (peer: INetworkPolicyPeer): boolean =>
      (peer.ipBlock !== undefined && !peer.ipBlock.cidr.endsWith('/0')) ||
      (peer.podSelector !== undefined &&
        peer.namespaceSelector === undefined &&
        redisDeployments.some((d) => selects(peer.podSelector, podLabels(d))));
    for (const rule of egress) {
      const ports = (rule.ports ?? []).map((p) => p.port);
      expect(ports.length, 'an egress rule without ports opens every port').toBeGreaterThan(0);
      expect((rule.to ?? []).length, 'an egress rule without peers opens every destination').toBeGreaterThan(0);
      for (const port of ports) {
        expect(typeof port, 'numeric ports only').toBe('number');
        allowedPorts.add(Number(port));
        const peers = rule.to ?? [];
        if (port === jwksPort) {
          expect(peers.every((peer) => peer.namespaceSelector === undefined && selects(peer.podSelector, podLabels(authDeployment)))).toBe(
            true,
          );
        } else if (redisPorts.has(Number(port))) {
          expect(peers.every(isRedisPeer), `Redis rule peers ${JSON.stringify(peers)}`).toBe(true);
        } else {
          expect(port, 'relays may reach Redis, the JWKS and DNS only').toBe(DNS_PORT);
          expect(peers.every((peer) => peer.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns')).toBe(true);
        }
      }
    }
    expect([...allowedPorts].sort()).toEqual([...new Set([...redisPorts, jwksPort, DNS_PORT])].sort());

    // The other ends agree: auth admits relays on the JWKS port; the dev Redis admits relays.
    const admits = (policyName: string, port: number): boolean =>
      (named(rendered.manifests, NetworkPolicy, policyName).spec?.ingress ?? []).some(
        (rule) =>
          (rule.ports ?? []).some((p) => p.port === port) &&
          (rule.from === undefined ||
            rule.from.some((peer) => peer.namespaceSelector === undefined && selects(peer.podSelector, podLabels(relayDeployment)))),
      );
    expect(admits('auth', jwksPort)).toBe(true);
    // Auth's one call is the XADD of its operations snapshot: Redis and the DNS to find it, nothing else.
    const authPolicy = named(rendered.manifests, NetworkPolicy, 'auth');
    expect(authPolicy.spec?.policyTypes).toContain('Egress');
    const authEgress = authPolicy.spec?.egress ?? [];
    expect(authEgress.length).toBeGreaterThan(0);
    for (const rule of authEgress) {
      const ports = (rule.ports ?? []).map((p) => Number(p.port));
      const peers = rule.to ?? [];
      expect(ports.length > 0 && peers.length > 0, 'an auth egress rule names its ports and peers').toBe(true);
      if (ports.every((port) => redisPorts.has(port)))
        expect(peers.every(isRedisPeer), `auth Redis peers ${JSON.stringify(peers)}`).toBe(true);
      else {
        expect(
          ports.every((port) => port === DNS_PORT),
          'auth may reach Redis and DNS only',
        ).toBe(true);
        expect(peers.every((peer) => peer.podSelector?.matchLabels?.['k8s-app'] === 'kube-dns')).toBe(true);
      }
    }
    if (redisDeployments.length > 0) expect(admits('redis', 6379)).toBe(true);
  });

  it('boots the dashboard on the port its Deployment and Service declare, with URLs a browser can use, and lets it send nothing', () => {
    const deployment = named(rendered.manifests, Deployment, 'dashboard');
    const env = processEnv(envOf('dashboard'));
    const parsed = parseDashboardEnv(env);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const known = new Set(inputKeys(dashboardEnvSchema));
    expect(known.has('DASHBOARD_PORT'), 'the dashboard schema exposes its variable names').toBe(true);
    expect(Object.keys(env).filter((n) => n.startsWith('DASHBOARD_') && !known.has(n))).toEqual([]);
    expect(parsed.config.pageDir, 'the image serves the page built into it').toBeUndefined();

    const container = containerOf(deployment, 'dashboard');
    expect(container.ports?.map((p) => p.containerPort)).toEqual([parsed.config.port]);
    expect(container.readinessProbe?.httpGet?.path).toBe('/readyz');
    expect(container.livenessProbe?.httpGet?.path).toBe('/healthz');
    const service = named(rendered.manifests, Service, 'dashboard');
    expect(selects({ matchLabels: service.spec?.selector ?? {} }, podLabels(deployment))).toBe(true);
    expect(podPortBehind(service, 80, deployment)).toBe(parsed.config.port);

    // /config.json is read by the operator's browser: in-cluster names would not resolve there,
    // and in prod the operator credential and the token travel over TLS only.
    const { authUrl, relayUrl } = parsed.config.page;
    for (const url of [new URL(authUrl), new URL(relayUrl)]) {
      expect(url.hostname === 'localhost' || url.hostname.includes('.'), `${url.href}: not a bare Service name`).toBe(true);
      expect(url.hostname, url.href).not.toMatch(/\.svc(\.cluster\.local)?$/);
    }
    expect(new URL(relayUrl).pathname).toBe('/v1/ws');
    if (overlay.name !== 'dev') expect([new URL(authUrl).protocol, new URL(relayUrl).protocol]).toEqual(['https:', 'wss:']);

    const policies = ofKind(rendered.manifests, NetworkPolicy).filter(
      (p) => Object.keys(p.spec?.podSelector.matchLabels ?? {}).length > 0 && selects(p.spec?.podSelector, podLabels(deployment)),
    );
    expect(policies.map((p) => p.metadata?.name)).toEqual(['dashboard']);
    const policy = policies[0];
    // The page in the browser calls auth and the relays; the server calls nothing, DNS included.
    expect(policy?.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(policy?.spec?.egress ?? []).toEqual([]);
    const ingressPorts = (policy?.spec?.ingress ?? []).flatMap((rule) => (rule.ports ?? []).map((p) => p.port));
    expect(ingressPorts).toEqual([parsed.config.port]);
  });

  it('has Prometheus scrape every app on its metrics port, and lets it in', () => {
    for (const app of [...APPS, 'dashboard']) {
      const deployment = named(rendered.manifests, Deployment, app);
      const annotations = deployment.spec?.template.metadata?.annotations ?? {};
      expect(annotations['prometheus.io/scrape'], app).toBe('true');
      expect(annotations['prometheus.io/path'], app).toBe('/metrics');
      const port = Number(annotations['prometheus.io/port']);
      expect(
        containerOf(deployment, app).ports?.map((p) => p.containerPort),
        app,
      ).toContain(port);
      const ingress = named(rendered.manifests, NetworkPolicy, app).spec?.ingress ?? [];
      const fromMonitoring = ingress.some(
        (rule) =>
          (rule.ports ?? []).some((p) => p.port === port) &&
          (rule.from === undefined ||
            rule.from.some((peer) => peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'monitoring')),
      );
      expect(fromMonitoring, `${app}: no ingress rule admits the monitoring namespace on ${port}`).toBe(true);
    }
    const ingest = named(rendered.manifests, Deployment, 'ingest');
    expect(Number(envOf('ingest').values.INGEST_PORT)).toBe(containerOf(ingest, 'ingest').ports?.[0]?.containerPort);
  });
});
