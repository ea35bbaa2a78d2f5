/**
 * A JSON text that is equal for structurally equal values, whatever their key order: inputs are
 * often object literals rebuilt on every render, so identity cannot say whether they changed.
 */
export function stableKey(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) => {
      if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) sorted[k] = (v as Record<string, unknown>)[k];
      return sorted;
    }) ?? 'undefined'
  );
}
