import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { named, ofKind } from './loadManifests.js';
import { APPS, containerOf, deployDir, overlays, podSpecOf, loadOverlay } from './loadOverlay.js';
import type { RenderedOverlay } from './loadOverlay.js';
import { resolveEnv } from './resolveEnv.js';

const intEnv = (values: Record<string, string>, name: string): number => {
  const raw = values[name];
  if (raw === undefined || !/^\d+$/.test(raw)) throw new Error(`${name} must be set to an integer, got ${String(raw)}`);
  return Number(raw);
};

// Sensitive by name: these may only come from a Secret (secretKeyRef), never a literal value.
const SENSITIVE_NAME = /PASSWORD|SECRET|PRIVATE|CREDENTIAL|_KEYS?$|_TOKEN$/;
// What key material looks like in text: PEM blocks and the private members of a JWK.
const KEY_MATERIAL = /-----BEGIN [A-Z ]*PRIVATE KEY-----|"d"\s*:\s*"|"p"\s*:\s*"|"q"\s*:\s*"/;

it('every overlay directory is covered by these tests', () => {
  const dirs = readdirSync(join(deployDir(), 'overlays'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  expect(dirs).toEqual(overlays.map((o) => o.name).sort());
});

it('commits no key material and no Secret anywhere under deploy/, referenced by an overlay or not', () => {
  const offenders: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (KEY_MATERIAL.test(readFileSync(path, 'utf8')) || /^kind:\s*Secret\s*$/m.test(readFileSync(path, 'utf8')))
        offenders.push(path);
    }
  };
  walk(deployDir());
  expect(offenders).toEqual([]);
});

describe.each(overlays)('deploy/overlays/$name, as committed in deploy/rendered/$name.yaml', (overlay) => {
  let rendered: RenderedOverlay;
  beforeAll(() => {
    rendered = loadOverlay(overlay.name);
  });
  const deployments = (): Deployment[] => ofKind(rendered.manifests, Deployment);

  it('every object of the render validates offline against the Kubernetes API schemas', () => {
    expect(rendered.schemaErrors).toEqual([]);
    for (const app of APPS) expect(named(rendered.manifests, Deployment, app).metadata?.name).toBe(app);
    expect(named(rendered.manifests, Service, 'relay').spec?.selector).toEqual({ 'app.kubernetes.io/name': 'relay' });
  });

  it(`puts everything in namespace ${overlay.namespace}, which enforces the restricted pod security profile`, () => {
    const namespace = named(rendered.manifests, Namespace, overlay.namespace);
    expect(namespace.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    const elsewhere = rendered.manifests
      .filter((m) => !(m instanceof Namespace) && m.metadata?.namespace !== overlay.namespace)
      .map((m) => `${m.kind}/${String(m.metadata?.name)}`);
    expect(elsewhere).toEqual([]);
  });

  it('rolls relays out in a single wave: all new pods first, no old pod stopped before they are ready', () => {
    const relay = named(rendered.manifests, Deployment, 'relay');
    expect(relay.spec?.strategy?.type).toBe('RollingUpdate');
    expect(relay.spec?.strategy?.rollingUpdate?.maxSurge).toBe('100%');
    expect(relay.spec?.strategy?.rollingUpdate?.maxUnavailable).toBe(0);
    // The HPA owns the replica count; a count in the manifest would reset it on every apply.
    expect(relay.spec?.replicas).toBeUndefined();
    const hpa = named(rendered.manifests, HorizontalPodAutoscaler, 'relay');
    expect(hpa.spec?.scaleTargetRef).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', name: 'relay' });
    expect(hpa.spec?.minReplicas ?? 1).toBeGreaterThanOrEqual(1);
    expect(hpa.spec?.maxReplicas).toBeGreaterThanOrEqual(hpa.spec?.minReplicas ?? 1);
    const pdb = named(rendered.manifests, PodDisruptionBudget, 'relay');
    expect(pdb.spec?.selector?.matchLabels).toEqual(relay.spec?.selector.matchLabels);
  });

  it('gives relays a grace period longer than their drain deadline, which is at least their drain window', () => {
    const relay = named(rendered.manifests, Deployment, 'relay');
    const env = resolveEnv(containerOf(relay, 'relay'), ofKind(rendered.manifests, ConfigMap));
    expect(env.errors).toEqual([]);
    const windowMs = intEnv(env.values, 'RELAY_DRAIN_WINDOW_MS');
    const deadlineMs = intEnv(env.values, 'RELAY_DRAIN_DEADLINE_MS');
    const graceMs = (podSpecOf(relay).terminationGracePeriodSeconds ?? 30) * 1000;
    expect(windowMs).toBeGreaterThan(0);
    expect(deadlineMs).toBeGreaterThanOrEqual(windowMs);
    expect(graceMs).toBeGreaterThan(windowMs);
    // The process needs time to exit after closing its last socket, before the kubelet's SIGKILL.
    expect(graceMs - deadlineMs).toBeGreaterThanOrEqual(10_000);
  });

  it('probes every container: readiness, and a liveness that does not depend on Redis or drain state', () => {
    for (const deployment of deployments()) {
      for (const container of podSpecOf(deployment).containers) {
        const where = `${String(deployment.metadata?.name)}/${container.name}`;
        expect(container.readinessProbe, `${where} readinessProbe`).toBeDefined();
        expect(container.livenessProbe, `${where} livenessProbe`).toBeDefined();
        const portNames = (container.ports ?? []).flatMap((p) => [p.name, p.containerPort]);
        for (const probe of [container.startupProbe, container.readinessProbe, container.livenessProbe]) {
          const port = probe?.httpGet?.port ?? probe?.tcpSocket?.port;
          if (port !== undefined) expect(portNames, `${where} probe port ${port}`).toContain(port);
        }
      }
    }
    for (const app of APPS) {
      const container = containerOf(named(rendered.manifests, Deployment, app), app);
      expect(container.livenessProbe?.httpGet?.path, `${app} liveness`).toBe('/healthz');
    }
    const relay = containerOf(named(rendered.manifests, Deployment, 'relay'), 'relay');
    expect(relay.readinessProbe?.httpGet?.path).toBe('/readyz');
  });

  it('sets CPU and memory requests and limits on every container', () => {
    for (const deployment of deployments()) {
      for (const container of podSpecOf(deployment).containers) {
        const where = `${String(deployment.metadata?.name)}/${container.name}`;
        for (const side of ['requests', 'limits'] as const) {
          for (const resource of ['cpu', 'memory']) {
            expect(container.resources?.[side]?.[resource], `${where} ${side}.${resource}`).toBeDefined();
          }
        }
      }
    }
  });

  it(
    overlay.digestPinned
      ? 'pins every streamgate image by digest and no image to latest'
      : 'pins every image to a version tag, never latest',
    () => {
      for (const deployment of deployments()) {
        for (const container of [...podSpecOf(deployment).containers, ...(podSpecOf(deployment).initContainers ?? [])]) {
          const image = container.image ?? '';
          const [ref = '', digest] = image.split('@');
          const tag = /:([^/:]+)$/.exec(ref)?.[1];
          expect(tag, `${image} has no tag`).toBeDefined();
          expect(tag, image).not.toBe('latest');
          expect(tag, `${image}: a version, not a moving name`).toMatch(/^v?\d+\.\d+\.\d+/);
          if (digest !== undefined) expect(digest, image).toMatch(/^sha256:[0-9a-f]{64}$/);
          if (overlay.digestPinned && image.startsWith('ghcr.io/streamgate/'))
            expect(digest, `${image} is not digest-pinned`).toBeDefined();
          expect(container.imagePullPolicy, image).not.toBe('Always');
        }
      }
    },
  );

  it('holds no secret values: no Secret objects, no key material, sensitive variables only from Secrets', () => {
    expect(ofKind(rendered.manifests, Secret).map((s) => s.metadata?.name)).toEqual([]);
    expect(rendered.yaml).not.toMatch(KEY_MATERIAL);
    for (const deployment of deployments()) {
      for (const container of podSpecOf(deployment).containers) {
        for (const variable of container.env ?? []) {
          if (SENSITIVE_NAME.test(variable.name)) {
            expect(variable.valueFrom?.secretKeyRef, `${container.name} ${variable.name} must come from a Secret`).toBeDefined();
          }
        }
      }
    }
  });

  it('runs every pod as a non-root user without privileges or a service account token', () => {
    for (const deployment of deployments()) {
      const pod = podSpecOf(deployment);
      const where = String(deployment.metadata?.name);
      expect(pod.automountServiceAccountToken, where).toBe(false);
      expect(pod.securityContext?.runAsNonRoot, where).toBe(true);
      expect(pod.securityContext?.runAsUser, where).toBeGreaterThan(0);
      expect(pod.securityContext?.seccompProfile?.type, where).toBe('RuntimeDefault');
      for (const container of pod.containers) {
        expect(container.securityContext?.allowPrivilegeEscalation, `${where}/${container.name}`).toBe(false);
        expect(container.securityContext?.readOnlyRootFilesystem, `${where}/${container.name}`).toBe(true);
        expect(container.securityContext?.capabilities?.drop, `${where}/${container.name}`).toEqual(['ALL']);
      }
    }
  });

  it('runs at least two ingest workers and two auth replicas, each with a disruption budget', () => {
    for (const app of ['ingest', 'auth']) {
      expect(named(rendered.manifests, Deployment, app).spec?.replicas, app).toBeGreaterThanOrEqual(2);
      expect(named(rendered.manifests, PodDisruptionBudget, app).spec?.selector?.matchLabels).toEqual({ 'app.kubernetes.io/name': app });
    }
  });
});
