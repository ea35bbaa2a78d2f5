import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';

// Static imports and re-exports, type-only ones included (`import type`, `export … from`); a
// dynamic `import()` is not one, and is how the main entry reaches the JetStream writer.
const STATIC_IMPORT = /^\s*(?:import|export)\b[^;]*?\bfrom\s*'([^']+)'|^\s*import\s*'([^']+)'/gm;

/** Every source file the main entry reaches by static imports, and every package they name. */
function staticClosure(entry: string): { files: string[]; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const queue = [entry];
  for (let file = queue.pop(); file !== undefined; file = queue.pop()) {
    if (files.has(file)) continue;
    files.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const spec = match[1] ?? match[2] ?? '';
      if (spec.startsWith('.')) queue.push(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else packages.add(spec);
    }
  }
  return { files: [...files].map((f) => f.slice(import.meta.dirname.length + 1)).sort(), packages };
}

describe('the main entry (@streamgate/server) and the NATS client', () => {
  it('imports nothing of the NATS client nor of jetstream/, even as a type', () => {
    // A consumer compiled with skipLibCheck false cannot compile @nats-io's declarations, and a
    // Redis-only backend should not load NATS code: JetStream targets load it on first use.
    const { files, packages } = staticClosure(join(import.meta.dirname, 'index.ts'));
    expect(files).toContain('createPublisher.ts');
    expect(files).toContain('JetStreamTargetWriters.ts');
    expect(files.filter((f) => f.startsWith('jetstream/'))).toEqual([]);
    expect([...packages].filter((p) => p.startsWith('@nats-io/'))).toEqual([]);
  });

  it('sees the static imports of the JetStream subpath, so it would see them in the main entry', () => {
    const { packages } = staticClosure(join(import.meta.dirname, 'jetstream', 'index.ts'));
    expect(packages).toContain('@nats-io/jetstream');
    expect(packages).toContain('@nats-io/transport-node');
  });
});
