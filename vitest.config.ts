import { defineConfig } from 'vitest/config';

// Workspace packages export their TypeScript source under the `streamgate-source` condition,
// so tests run against source without a build step (production images use dist/).
const resolve = { conditions: ['streamgate-source', 'module', 'node', 'development|production'] };
const ssr = { resolve: { conditions: ['streamgate-source', 'node', 'import', 'development|production'] } };

// Cross-process files whose assertions bound a latency or a rate against the wall clock (a
// deadline after SIGTERM, a worst delivery delay, a rate limiter's pace, a liveness timeout) or
// that drive Chromium: they run one at a time after the rest, with the machine to themselves.
// Every other file in test/ starts its own redis-server and apps on free ports and shares
// nothing, so two run at once.
const timingSensitive = [
  'test/drain.test.ts',
  'test/liveness.test.ts',
  'test/liveMessages.test.ts',
  'test/clusterLive.test.ts',
  'test/targetDown.test.ts',
  'test/notifyReads.test.ts',
  'test/slowConsumer.test.ts',
  'test/venue/venueCallers.test.ts',
  'test/venue/venueRateLimit.test.ts',
  'test/browser/**/*.test.{ts,tsx}',
  // A fencing deadline and a rate limiter's pace: each missed its bound in one CI run in two
  // when three files ran beside it.
  'test/ingestCrash.test.ts',
  'test/limits.test.ts',
];

const sessionLogic = [
  'apps/relay/src/Session.ts',
  'apps/relay/src/SessionSubscriptions.ts',
  'apps/relay/src/ActiveSubscription.ts',
  'apps/relay/src/readClientFrame.ts',
  'apps/relay/src/refreshVerdict.ts',
];

const crossProcess = {
  environment: 'node' as const,
  testTimeout: 120_000,
  hookTimeout: 60_000,
  // The apps these files spawn are bundled once per run (packages/testkit/src/buildAppsOnce.ts).
  globalSetup: ['packages/testkit/src/buildAppsOnce.ts'],
};

export default defineConfig({
  resolve,
  ssr,
  test: {
    // Unit files and the parallel cross-process files share three workers on two cores: with
    // two, the cores were about 64% busy, the files waiting on the processes they start. The
    // serial group starts once both are done; it holds the files whose deadlines three workers
    // made miss (ingestCrash's fencing, limits' rate limiter).
    maxWorkers: 3,
    coverage: {
      provider: 'v8',
      reporter: ['text-summary', 'text'],
      // What CONTRIBUTING.md promises: the relay's per-socket protocol logic (Session and the
      // pieces it was split into) and its fan-out core, each at 90% of lines or more, measured by
      // the unit tests beside them.
      include: [...sessionLogic, 'apps/relay/src/core/**'],
      exclude: ['**/*.test.ts'],
      thresholds: {
        'apps/relay/src/{Session,SessionSubscriptions,ActiveSubscription,readClientFrame,refreshVerdict}.ts': { lines: 90 },
        'apps/relay/src/core/**': { lines: 90 },
      },
    },
    projects: [
      {
        resolve,
        ssr,
        test: {
          name: 'unit',
          include: ['apps/*/src/**/*.test.ts', 'packages/*/src/**/*.test.{ts,tsx}', 'scripts/*.test.mjs'],
          environment: 'node',
          testTimeout: 20_000,
          sequence: { groupOrder: 0 },
        },
      },
      {
        resolve,
        ssr,
        test: {
          ...crossProcess,
          name: 'e2e',
          include: ['test/**/*.test.{ts,tsx}'],
          exclude: ['**/node_modules/**', ...timingSensitive],
          sequence: { groupOrder: 0 },
        },
      },
      {
        resolve,
        ssr,
        test: {
          ...crossProcess,
          name: 'e2e-serial',
          include: timingSensitive,
          fileParallelism: false,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
