import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';

export type Manifest =
  Deployment | Service | ConfigMap | Namespace | Secret | PodDisruptionBudget | HorizontalPodAutoscaler | NetworkPolicy;

export type LoadedManifests = { manifests: Manifest[]; errors: string[] };

type ModelClass<T, M> = { is(value: unknown): value is T; new (data: T): M };

function asModel<T, M extends Manifest>(model: ModelClass<T, M>, data: unknown): M | null {
  return model.is(data) ? new model(data) : null;
}

// Every kind the overlays may render. A kind missing here is an error, never a skip: add its
// kubernetes-models class (and, for a CRD such as a ServiceMonitor, its own schema check).
const constructors: ReadonlyArray<(data: unknown) => Manifest | null> = [
  (d) => asModel(Deployment, d),
  (d) => asModel(Service, d),
  (d) => asModel(ConfigMap, d),
  (d) => asModel(Namespace, d),
  (d) => asModel(Secret, d),
  (d) => asModel(PodDisruptionBudget, d),
  (d) => asModel(HorizontalPodAutoscaler, d),
  (d) => asModel(NetworkPolicy, d),
];

function describeDocument(data: unknown): string {
  if (typeof data !== 'object' || data === null) return JSON.stringify(data);
  const record = data as Record<string, unknown>;
  const metadata = record.metadata;
  const name =
    typeof metadata === 'object' && metadata !== null && typeof (metadata as Record<string, unknown>).name === 'string'
      ? String((metadata as Record<string, unknown>).name)
      : '(no name)';
  return `${String(record.apiVersion)} ${String(record.kind)} ${name}`;
}

/**
 * Parses rendered multi-document YAML and validates each object against the Kubernetes API
 * schemas bundled in kubernetes-models (offline). Collects every problem rather than stopping at
 * the first, so one run lists all of them.
 */
export function loadManifests(yamlText: string): LoadedManifests {
  const manifests: Manifest[] = [];
  const errors: string[] = [];
  for (const doc of parseAllDocuments(yamlText)) {
    if (doc.errors.length > 0) {
      errors.push(`YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
      continue;
    }
    const data: unknown = doc.toJS();
    if (data === null || data === undefined) continue;
    let manifest: Manifest | null = null;
    for (const make of constructors) {
      manifest = make(data);
      if (manifest !== null) break;
    }
    if (manifest === null) {
      errors.push(`${describeDocument(data)}: no bundled schema for this apiVersion/kind (add it to test/deploy/loadManifests.ts)`);
      continue;
    }
    try {
      manifest.validate();
    } catch (error) {
      errors.push(`${describeDocument(data)}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    manifests.push(manifest);
  }
  return { manifests, errors };
}

/** All manifests of one model class, e.g. `ofKind(manifests, Deployment)`. */
export function ofKind<M extends Manifest>(manifests: readonly Manifest[], model: abstract new (...args: never[]) => M): M[] {
  return manifests.filter((m): m is M => m instanceof model);
}

/** The one manifest of that class and name; throws with the names present otherwise. */
export function named<M extends Manifest>(manifests: readonly Manifest[], model: abstract new (...args: never[]) => M, name: string): M {
  const candidates = ofKind(manifests, model);
  const found = candidates.filter((m) => m.metadata?.name === name);
  const first = found[0];
  if (found.length !== 1 || first === undefined) {
    throw new Error(
      `expected one ${model.name} named ${name}, found ${found.length} among [${candidates.map((m) => m.metadata?.name).join(', ')}]`,
    );
  }
  return first;
}
