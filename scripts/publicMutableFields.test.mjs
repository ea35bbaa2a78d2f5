import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { findPublicMutableFields, productionSources, publicMutableFieldsIn } from './publicMutableFields.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('publicMutableFields', () => {
  it('finds no class outside testing code with a field others may reassign', () => {
    expect(publicMutableFieldsIn(root)).toEqual([]);
  });

  it('looks at the production sources of every app and package, and at no test or fake', () => {
    const sources = productionSources(root);
    expect(sources).toContain('apps/relay/src/core/StreamChannel.ts');
    expect(sources).toContain('packages/client/src/RelayClient.ts');
    expect(sources.some((path) => /\.test\.tsx?$/.test(path) || path.includes('/testing/'))).toBe(false);
  });

  it('flags public, protected and parameter fields without readonly, and nothing private or readonly', () => {
    const text = `
      export class Open {
        count = 0;
        protected level = 1;
        static shared = 2;
        onEvent = (): void => undefined;
        constructor(public host: string, protected port: number, readonly id: string, private secret: string) {}
      }
      class Closed {
        readonly a = 0;
        private b = 1;
        #c = 2;
        static readonly d = 3;
        get e(): number { return this.#c; }
        constructor(private readonly x: number, readonly y: number) {}
      }
      const Anonymous = class { late = true; };
    `;
    expect(findPublicMutableFields('x.ts', text)).toEqual([
      'x.ts:3 Open.count',
      'x.ts:4 Open.level',
      'x.ts:5 Open.shared',
      'x.ts:6 Open.onEvent',
      'x.ts:7 Open.host',
      'x.ts:7 Open.port',
      'x.ts:17 (anonymous class).late',
    ]);
  });
});
