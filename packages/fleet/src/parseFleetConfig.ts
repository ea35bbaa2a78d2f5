import { z } from 'zod';
import { ExitCode, envBool, envInt, envText, parseEnv, urlCheck, whenValid } from '@streamgate/boot';
import type { ConfigResult, Env } from '@streamgate/boot';

/** What `npm run fleet` reads from its environment. */
export const fleetConfigSchema = z
  .object({
    FLEET_REDIS_URL: envText({ optional: 'to start a redis-server for the fleet', check: urlCheck(['redis'], 'redis://127.0.0.1:6379/0') }),
    /**
     * The streams on a Redis Cluster the fleet starts (3 primaries, 1 replica each, `Kt` on every
     * node); the operations stream stays on a redis-server of its own.
     */
    FLEET_REDIS_CLUSTER: envBool({ fallback: false }),
    FLEET_AUTH_PORT: envInt({ optional: 'for any free port', min: 1, max: 65_535 }),
    FLEET_DASHBOARD: envBool({ fallback: true }),
    FLEET_DASHBOARD_PORT: envInt({ optional: 'for any free port', min: 1, max: 65_535 }),
    FLEET_VIEWERS: envInt({ fallback: 20, min: 1, max: 2_000, fix: 'set how many simulated clients connect' }),
    FLEET_BLOCK_MS: envInt({ fallback: 1_000, min: 100, max: 60_000, fix: 'set the block interval in ms' }),
    FLEET_DRAIN_WINDOW_MS: envInt({ fallback: 20_000, min: 0, max: 600_000, meaning: '0 = all at once' }),
    FLEET_EXIT_AFTER_EVENTS: envInt({
      fallback: 0,
      min: 0,
      max: 1_000_000,
      meaning: '0 = run until quit',
      fix: 'set how many demo events and chain blocks the tail must see before the fleet stops by itself',
    }),
  })
  .superRefine(
    (e, ctx) => {
      if (e.FLEET_REDIS_CLUSTER && e.FLEET_REDIS_URL !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['FLEET_REDIS_CLUSTER'],
          message: 'starts a Redis Cluster of its own, so it takes no FLEET_REDIS_URL; unset one of them',
        });
    },
    whenValid('FLEET_REDIS_URL', 'FLEET_REDIS_CLUSTER'),
  );

/** The apps' exit code for a bad configuration, for the fleet script (which cannot import @streamgate/boot). */
export const FLEET_CONFIG_EXIT_CODE = ExitCode.config;

export type FleetConfig = z.output<typeof fleetConfigSchema>;

export function parseFleetConfig(env: Env): ConfigResult<FleetConfig> {
  return parseEnv(fleetConfigSchema, env, { app: 'fleet' });
}
