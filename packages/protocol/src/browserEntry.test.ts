import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import * as protocol from './index.js';

const here = import.meta.dirname;
const sources = readdirSync(here).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));

describe('the protocol entry is safe for a browser bundle', () => {
  it('imports nothing but zod (mini for the wire schemas), Standard Schema types and its own modules (no Node built-ins, no server packages)', () => {
    const foreign = sources.flatMap((file) =>
      [...readFileSync(join(here, file), 'utf8').matchAll(/^\s*(import|export)\b(\s+type\b)?[^'"]*from\s+'([^']+)'/gm)]
        .map((m) => ({ spec: m[3] ?? '', typeOnly: m[2] !== undefined }))
        // @standard-schema/spec is types only, and imported only as types: nothing of it reaches a bundle.
        .filter(({ spec, typeOnly }) => !(typeOnly && spec === '@standard-schema/spec'))
        .filter(({ spec }) => !spec.startsWith('./') && !['zod', 'zod/mini', 'zod/v4/locales/en.js'].includes(spec))
        .map(({ spec, typeOnly }) => `${file}: ${typeOnly ? 'type ' : ''}${spec}`),
    );
    expect(foreign).toEqual([]);
  });

  it('leaves the ingest event schemas and the demand contract to their own packages', () => {
    const names = Object.keys(protocol);
    expect(names).toContain('serverFrameSchema');
    expect(names.filter((n) => /ingest|demand/i.test(n))).toEqual([]);
  });
});
