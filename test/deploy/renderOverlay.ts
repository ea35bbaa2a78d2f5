import { join } from 'node:path';
import { repoRoot } from '@streamgate/testkit';
import type { Deployment } from 'kubernetes-models/apps/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { loadManifests } from './loadManifests.js';
import type { Manifest } from './loadManifests.js';
import { renderKustomization } from './renderKustomization.js';

/** Every overlay under deploy/overlays, with what the tests expect of it. */
export const overlays = [
  { name: 'dev', namespace: 'streamgate-dev', digestPinned: false },
  { name: 'prod', namespace: 'streamgate', digestPinned: true },
] as const;

export type Overlay = (typeof overlays)[number];

export type RenderedOverlay = { yaml: string; manifests: Manifest[]; schemaErrors: string[] };

export const deployDir = (): string => join(repoRoot(), 'deploy');

/** Renders an overlay with kustomize; throws (failing the suite) when it cannot, never skips. */
export function renderOverlay(name: string): RenderedOverlay {
  const rendered = renderKustomization(join(deployDir(), 'overlays', name));
  if (!rendered.ok) throw new Error(`${rendered.error.code}: ${rendered.error.message}`);
  const loaded = loadManifests(rendered.yaml);
  return { yaml: rendered.yaml, manifests: loaded.manifests, schemaErrors: loaded.errors };
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
