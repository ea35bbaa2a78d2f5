import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';

type Parsed = { ok: true; objects: { id: string; value: unknown }[] } | { ok: false; message: string };

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}

/** `apiVersion kind namespace/name`: what identifies an object to the API server. */
function identify(value: unknown): string {
  const metadata = field(value, 'metadata');
  const namespace = field(metadata, 'namespace');
  const where = typeof namespace === 'string' ? `${namespace}/` : '';
  return `${String(field(value, 'apiVersion'))} ${String(field(value, 'kind'))} ${where}${String(field(metadata, 'name'))}`;
}

function parse(text: string): Parsed {
  const objects: { id: string; value: unknown }[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) return { ok: false, message: doc.errors.map((e) => e.message).join('; ') };
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) objects.push({ id: identify(value), value });
  }
  return { ok: true, objects };
}

/** The first path at which two values differ, e.g. `spec.replicas` or `spec.template.spec.containers[0].image`. */
function firstDifference(a: unknown, b: unknown, path: string): string {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      if (!isDeepStrictEqual(a[i], b[i])) return firstDifference(a[i], b[i], `${path}[${i}]`);
    }
  } else if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && !Array.isArray(a) && !Array.isArray(b)) {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    for (const key of [...new Set([...Object.keys(ra), ...Object.keys(rb)])].sort()) {
      if (!isDeepStrictEqual(ra[key], rb[key])) return firstDifference(ra[key], rb[key], path === '' ? key : `${path}.${key}`);
    }
  }
  return `${path === '' ? '(the whole object)' : path}: committed ${JSON.stringify(a) ?? 'nothing'}, fresh ${JSON.stringify(b) ?? 'nothing'}`;
}

/**
 * How a committed render differs from a fresh one, one line per difference; empty when they
 * match. Both are compared as parsed YAML, document by document: comments (the generated-file
 * header), key order within a mapping, quoting and line wrapping are ignored, so kustomize v5
 * releases that print the same objects slightly differently agree; every object, its place in
 * the order (kustomize puts Namespaces first, and `kubectl apply -f` keeps that order), every key
 * and every value count.
 */
export function diffRenders(committed: string, fresh: string): string[] {
  const before = parse(committed);
  const after = parse(fresh);
  if (!before.ok) return [`the committed render is not valid YAML: ${before.message}`];
  if (!after.ok) return [`the fresh render is not valid YAML: ${after.message}`];
  const differences: string[] = [];
  const freshIds = new Set(after.objects.map((o) => o.id));
  const committedIds = new Set(before.objects.map((o) => o.id));
  for (const { id } of after.objects) if (!committedIds.has(id)) differences.push(`${id}: missing from the committed render`);
  for (const { id } of before.objects) if (!freshIds.has(id)) differences.push(`${id}: committed, but the overlay no longer renders it`);
  for (const { id, value } of before.objects) {
    const match = after.objects.find((o) => o.id === id);
    if (match !== undefined && !isDeepStrictEqual(value, match.value))
      differences.push(`${id}: ${firstDifference(value, match.value, '')}`);
  }
  if (differences.length === 0) {
    const order = (objects: { id: string }[]): string[] => objects.map((o) => o.id);
    if (!isDeepStrictEqual(order(before.objects), order(after.objects))) {
      differences.push(
        `same objects in another order: committed [${order(before.objects).join(', ')}], fresh [${order(after.objects).join(', ')}]`,
      );
    }
  }
  return differences;
}
