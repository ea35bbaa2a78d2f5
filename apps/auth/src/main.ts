import { initTRPC } from '@trpc/server';
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { appLogger, bootApp, configError, exitOnConfigError } from '@streamgate/boot';
import type { FaultPolicy } from '@streamgate/boot';
import { RedisDemandRegistry } from '@streamgate/demand';
import { isJetStreamTarget } from '@streamgate/protocol';
import { openRedis } from '@streamgate/redis';
import { createTokenIssuer } from '@streamgate/server';
import { parseAuthConfig } from './config.js';
import type { AuthConfig } from './config.js';
import { createAuthMetrics } from './createAuthMetrics.js';
import { createAuthServer } from './createAuthServer.js';
import type { AuthServer } from './createAuthServer.js';
import { combineObservers, createDemandObserver } from './createDemandObserver.js';
import { DemandTargets } from './DemandTargets.js';
import { createDemoRouter } from './demoRouter.js';
import { createOpsContext, createOpsRouter } from './ops/createOpsRouter.js';
import { loadSigningKeys } from './loadSigningKeys.js';
import { watchSigningKeyFile } from './watchSigningKeyFile.js';
import { startAuthOpsPublisher } from './ops/startAuthOpsPublisher.js';
import type { AuthOpsPublisher } from './ops/startAuthOpsPublisher.js';

/** Everything from the signing keys to the "listening" line; a throw is a failed start (exit 1). */
async function startAuth(
  config: AuthConfig,
  logger: Logger,
  faults: FaultPolicy,
): Promise<{ server: AuthServer; demand: DemandTargets | null; ops: AuthOpsPublisher | null; stopping: () => void }> {
  const loaded = await loadSigningKeys(config.signingKeys);
  if (!loaded.ok) {
    const variable = config.signingKeys.kind === 'file' ? 'AUTH_SIGNING_KEYS_FILE' : 'AUTH_SIGNING_KEYS';
    exitOnConfigError(logger, configError('auth', [{ variable, message: loaded.error.message }]));
  }
  const keys = loaded.keys;
  if (config.signingKeys.kind === 'generate') {
    logger.warn({ kid: keys.current.kid }, 'AUTH_DEV_GENERATE_KEYS: signing with a key generated at boot; tokens die with this process');
  }

  const issuer = createTokenIssuer({
    keys,
    issuer: config.issuer,
    audience: config.audience,
    // One target, or several with each stream placed by placeStream (a list of one places on it).
    redis: config.redisTargets,
    ttlSeconds: config.tokenTtlSeconds,
  });
  const metrics = createAuthMetrics({ defaultMetrics: true });
  const faultCounter = new Counter({
    name: 'streamgate_auth_faults_total',
    help: 'Unhandled rejections and uncaught exceptions; each one ends the process',
    labelNames: ['kind'],
    registers: [metrics.registry],
  });
  faults.countWith((kind) => faultCounter.inc({ kind }));
  const keyReloads = new Counter({
    name: 'streamgate_auth_signing_key_reloads_total',
    help: 'AUTH_SIGNING_KEYS_FILE re-reads by outcome (invalid: the keys in force were kept)',
    labelNames: ['outcome'],
    registers: [metrics.registry],
  });
  const keyFile =
    config.signingKeys.kind === 'file'
      ? await watchSigningKeyFile({ ...config.signingKeys, keys, logger, onReload: (outcome) => keyReloads.inc({ outcome }) })
      : null;
  // Demand goes to the Redis the token names: ingest keeps its demand set beside the streams. A
  // JetStream target has no Redis of its own: its streams' demand goes to AUTH_JETSTREAM_DEMAND_TARGET.
  const demand =
    config.demandPrefixes.length === 0
      ? null
      : new DemandTargets(
          config.redisTargets,
          (target) => {
            const client = openRedis(target, { connectionName: 'streamgate-auth-demand', node: { maxRetriesPerRequest: 1 } });
            client.on('error', (error: Error) => logger.warn({ err: error, target }, 'demand redis error'));
            const registry = new RedisDemandRegistry(client);
            return { heartbeat: (streams, ttlMs) => registry.heartbeat(streams, ttlMs), close: () => client.disconnect() };
          },
          config.jetStreamDemandTarget,
        );
  if (demand !== null && config.jetStreamDemandTarget !== null && config.redisTargets.some(isJetStreamTarget)) {
    logger.info(
      { demandTarget: config.jetStreamDemandTarget },
      'demand for streams on JetStream targets is registered in AUTH_JETSTREAM_DEMAND_TARGET',
    );
  }
  const observer =
    demand === null
      ? metrics.observer
      : combineObservers(
          metrics.observer,
          createDemandObserver({
            prefixes: config.demandPrefixes,
            ttlMs: config.demandTtlMs,
            register: (stream, ttlMs) => demand.register(stream, ttlMs),
            onOutcome: (outcome, stream, error) => {
              metrics.demandRegistrations.inc({ outcome });
              if (outcome === 'failed') logger.warn({ err: error, stream }, 'could not register ingest demand');
            },
          }),
        );
  const opsRouter = createOpsRouter({
    issuer,
    ops: config.ops,
    operatorCredentialSha256: config.operatorCredentialSha256,
    observer,
    exposeStackTraces: config.exposeStackTraces,
    onRefused: (code) => logger.warn({ code }, 'ops.token refused'),
  });
  // Ops first: the merged router takes its context type (the Authorization header) from it.
  const router = config.demoRouter
    ? initTRPC.create().mergeRouters(opsRouter, createDemoRouter({ issuer, observer, exposeStackTraces: config.exposeStackTraces }))
    : opsRouter;
  const trpc = { router, createContext: createOpsContext };
  if (config.operatorCredentialSha256 === null) logger.info('ops.token is off (AUTH_OPERATOR_CREDENTIAL_SHA256 unset)');
  if (config.demoRouter)
    logger.warn('AUTH_DEMO_ROUTER: serving the demo router; any user but "mallory" gets a token for any demo:* stream');
  else logger.info('no demo token procedures (AUTH_DEMO_ROUTER is off): serving the JWKS of the signing keys for relays');
  const server = await createAuthServer({ trpc, keys, metrics, host: config.host, port: config.port, logger, cors: config.cors });
  // Test harnesses read the port from this line; keep "msg":"listening" and a numeric "port".
  logger.info({ port: server.port, host: server.host, kids: keys.all.map((k) => k.kid) }, 'listening');

  let ready = true;
  const ops =
    config.ops === null
      ? null
      : startAuthOpsPublisher({
          redisUrl: config.ops.redisUrl,
          stream: config.ops.stream,
          metrics,
          log: logger,
          state: {
            pod: config.podName,
            startedAt: Math.round(performance.timeOrigin),
            ready: () => ready,
            tokensIssuedTotal: () => metrics.counts.tokensIssued,
            refusals: () => metrics.counts.refusals,
            signingKeyIds: () => keys.all.map((k) => k.kid),
          },
        });
  return {
    server,
    demand,
    ops,
    stopping: () => {
      ready = false;
      keyFile?.close();
    },
  };
}

// Auth holds no state worth a drain: a fault exits at once and Kubernetes restarts the pod.
const bootLogger = appLogger('streamgate-auth');
const { log: logger, app: auth } = await bootApp({
  app: 'auth',
  bootLog: bootLogger,
  parseConfig: () => parseAuthConfig(process.env),
  log: (config) => appLogger('streamgate-auth', config.logLevel),
  create: startAuth,
  failedToStart: { message: 'auth service failed to start', by: 'bootLog' },
});

const shutdown = (signal: NodeJS.Signals): void => {
  logger.info({ signal }, 'shutting down');
  auth.demand?.close();
  auth.stopping();
  // The last snapshot says not ready, so the dashboard shows the service leaving rather than going stale.
  const ops = auth.ops;
  const lastSnapshot = ops === null ? Promise.resolve() : ops.publishLast().then(() => ops.close());
  Promise.all([lastSnapshot, auth.server.close()]).then(
    () => logger.info('closed'),
    (error: unknown) => {
      logger.error({ err: error }, 'close failed');
      process.exitCode = 1;
    },
  );
};
process.once('SIGTERM', shutdown);
process.once('SIGINT', shutdown);
