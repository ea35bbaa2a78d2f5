import { defineConfig } from 'vitest/config';

// Workspace packages export their TypeScript source under the `streamgate-source` condition,
// so tests run against source without a build step (production images use dist/).
const resolve = { conditions: ['streamgate-source', 'module', 'node', 'development|production'] };
const ssr = { resolve: { conditions: ['streamgate-source', 'node', 'import', 'development|production'] } };

export default defineConfig({
  resolve,
  ssr,
  test: {
    projects: [
      {
        resolve,
        ssr,
        test: {
          name: 'unit',
          include: ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.{ts,tsx}', 'scripts/*.test.mjs'],
          environment: 'node',
          testTimeout: 20_000,
        },
      },
      {
        resolve,
        ssr,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.{ts,tsx}'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 60_000,
          // Cross-process tests spawn redis-server and relay processes; on a 2-core machine
          // running them one file at a time keeps timing-sensitive assertions honest.
          fileParallelism: false,
        },
      },
    ],
  },
});
