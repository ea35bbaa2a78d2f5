import type { ConfigMap } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';

export type SecretRef = { secret: string; key: string; optional: boolean };

export type ResolvedEnv = {
  /** Literal values, ConfigMap values and field references (as `<fieldRef:path>`), by name. */
  values: Record<string, string>;
  /** Variables filled from Secrets, which no manifest holds. */
  secrets: Record<string, SecretRef>;
  errors: string[];
};

/** What a container's environment will be once the kubelet fills it, from the rendered objects. */
export function resolveEnv(container: IContainer, configMaps: readonly ConfigMap[]): ResolvedEnv {
  const values: Record<string, string> = {};
  const secrets: Record<string, SecretRef> = {};
  const errors: string[] = [];
  if (container.envFrom !== undefined && container.envFrom.length > 0) {
    errors.push(`${container.name}: envFrom hides variable names from review; list each variable under env`);
  }
  for (const variable of container.env ?? []) {
    const from = variable.valueFrom;
    if (from === undefined) {
      values[variable.name] = variable.value ?? '';
    } else if (from.configMapKeyRef !== undefined) {
      const ref = from.configMapKeyRef;
      const configMap = configMaps.find((c) => c.metadata?.name === ref.name);
      const value = configMap?.data?.[ref.key];
      if (value === undefined) errors.push(`${container.name} ${variable.name}: ConfigMap ${String(ref.name)} has no key ${ref.key}`);
      else values[variable.name] = value;
    } else if (from.secretKeyRef !== undefined) {
      const ref = from.secretKeyRef;
      secrets[variable.name] = { secret: String(ref.name), key: ref.key, optional: ref.optional ?? false };
    } else if (from.fieldRef !== undefined) {
      values[variable.name] = `<fieldRef:${from.fieldRef.fieldPath}>`;
    } else {
      errors.push(`${container.name} ${variable.name}: unsupported valueFrom`);
    }
  }
  return { values, secrets, errors };
}

/**
 * What each Secret the manifests reference holds, in the form deploy/README.md tells operators
 * to create it: values no manifest has, shaped so that an app's schema can check the rest.
 */
export const SECRET_SAMPLES: Readonly<Record<string, string>> = {
  'ops-operator/sha256': 'f'.repeat(64),
  'auth-redis/url': 'redis://auth:<password>@streams-redis.internal:6379/0',
};

/** Env as the process will see it: Secrets as their samples, or a placeholder for a free-form value. */
export function withSecretSamples(env: ResolvedEnv): Record<string, string> {
  const filled = Object.entries(env.secrets).map(([name, ref]) => {
    const id = `${ref.secret}/${ref.key}`;
    return [name, SECRET_SAMPLES[id] ?? `<secret ${id}>`] as const;
  });
  return { ...env.values, ...Object.fromEntries(filled) };
}
