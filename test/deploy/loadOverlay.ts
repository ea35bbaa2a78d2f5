import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '@streamgate/testkit';
import type { Deployment } from 'kubernetes-models/apps/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { loadManifests } from './loadManifests.js';
import type { Manifest } from './loadManifests.js';
import { RENDER_COMMAND, renderedPath } from '../../scripts/renderOverlayFile.js';

/** Every overlay under deploy/overlays, with what the tests expect of it. */
export const overlays = [
  { name: 'dev', namespace: 'streamgate-dev', digestPinned: false, streams: 'standalone' },
  { name: 'prod', namespace: 'streamgate', digestPinned: true, streams: 'standalone' },
  // prod with the streams on a Redis Cluster (deploy/components/redis-cluster).
  { name: 'prod-cluster', namespace: 'streamgate', digestPinned: true, streams: 'cluster' },
] as const;

export type Overlay = (typeof overlays)[number];

export type RenderedOverlay = { yaml: string; manifests: Manifest[]; schemaErrors: string[] };

export const deployDir = (): string => join(repoRoot(), 'deploy');

/**
 * An overlay as committed in deploy/rendered/, parsed and schema-checked. The tests read these
 * files rather than render, so they need no kustomize; renderedManifests.test.ts checks the files
 * equal a fresh render wherever a renderer is on PATH.
 */
export function loadOverlay(name: string): RenderedOverlay {
  const path = renderedPath(name);
  let yaml: string;
  try {
    yaml = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(
      `cannot read the committed render of deploy/overlays/${name} (${reason}): run \`${RENDER_COMMAND}\` and commit deploy/rendered/`,
    );
  }
  const loaded = loadManifests(yaml);
  return { yaml, manifests: loaded.manifests, schemaErrors: loaded.errors };
}

export function podSpecOf(deployment: Deployment): IPodSpec {
  const spec = deployment.spec?.template.spec;
  if (spec === undefined) throw new Error(`Deployment ${String(deployment.metadata?.name)} has no pod spec`);
  return spec;
}

export function containerOf(deployment: Deployment, name: string): IContainer {
  const container = podSpecOf(deployment).containers.find((c) => c.name === name);
  if (container === undefined) throw new Error(`Deployment ${String(deployment.metadata?.name)} has no container ${name}`);
  return container;
}

/** The streamgate apps, as opposed to the dev Redis. */
export const APPS = ['relay', 'auth', 'ingest'] as const;
