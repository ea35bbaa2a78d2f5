/**
 * `npm run fleet`: the whole system on loopback (packages/fleet/src/startFullFleet.ts): redis-server,
 * the auth service, two relay pods behind a front door, anvil behind two fault-injecting
 * provider proxies, an ingest worker following the chain and the simulated venue, simulated
 * viewers, a publisher of demo events, a CLI tail, and the operations dashboard. Commands on
 * stdin inject faults (type `help`).
 *
 * Environment (packages/fleet/src/parseFleetConfig.ts): FLEET_REDIS_URL, FLEET_REDIS_CLUSTER=1 (the streams
 * on a 3-primary Redis Cluster with a replica each; `kill-primary` fails one over), FLEET_AUTH_PORT,
 * FLEET_DASHBOARD, FLEET_DASHBOARD_PORT, FLEET_VIEWERS, FLEET_BLOCK_MS, FLEET_DRAIN_WINDOW_MS,
 * FLEET_EXIT_AFTER_EVENTS=N to stop by itself once the tail saw N demo events and N blocks (smoke tests).
 */
import { createInterface } from 'node:readline';
import { createPublisher } from '@streamgate/server';
import { demoStream } from '@streamgate/auth';
import { freePort } from '@streamgate/testkit';
import {
  FLEET_CONFIG_EXIT_CODE,
  FLEET_HELP,
  parseFleetCommand,
  parseFleetConfig,
  runFleetCommand,
  startFleetDashboard,
  startFleetTail,
  startFullFleet,
} from '@streamgate/fleet';
import type { FullFleet } from '@streamgate/fleet';

const say = (line: string): void => void process.stdout.write(`${line}\n`);
const parsed = parseFleetConfig(process.env);
if (!parsed.ok) {
  say(parsed.error.message);
  process.exit(FLEET_CONFIG_EXIT_CODE);
}
const config = parsed.config;

const closers: (() => unknown)[] = [];
let fleet: FullFleet | undefined;
let stopping = false;

async function shutdown(code: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    say('fleet stopping');
    for (const close of closers.splice(0).reverse()) await Promise.resolve(close());
    await fleet?.stop();
  }
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(0));
process.on('SIGTERM', () => void shutdown(0));

try {
  const dashboardPort = config.FLEET_DASHBOARD_PORT ?? (await freePort());
  const dashboardHost = '127.0.0.1';
  fleet = await startFullFleet({
    ...(config.FLEET_REDIS_URL === undefined ? {} : { redisUrl: config.FLEET_REDIS_URL }),
    redisCluster: config.FLEET_REDIS_CLUSTER,
    ...(config.FLEET_AUTH_PORT === undefined ? {} : { authPort: config.FLEET_AUTH_PORT }),
    corsOrigins: [`http://${dashboardHost}:${dashboardPort}`, `http://localhost:${dashboardPort}`],
    viewers: config.FLEET_VIEWERS,
    blockMs: config.FLEET_BLOCK_MS,
    drainWindowMs: config.FLEET_DRAIN_WINDOW_MS,
    log: say,
  });
  const running = fleet;
  const cluster = running.redisCluster;
  if (cluster === null) say(`redis   ${running.redisUrl}`);
  else {
    say(`redis   streams on the cluster ${running.redisUrl}; operations stream on ${running.opsRedisUrl}`);
    for (const node of cluster.nodes) say(`redis   cluster node 127.0.0.1:${node.port} ${node.role}`);
  }
  say(`auth    ${running.authUrl}/trpc   JWKS ${running.authUrl}/.well-known/jwks.json`);
  for (const relay of running.relays) say(`${relay.name} ${relay.url}   metrics ${relay.httpUrl}/metrics`);
  say(`relays  front door ${running.relayUrl} (spreads connections over the serving relays)`);
  for (const [name, proxy] of running.chain.providers)
    say(`chain   provider ${name} ${proxy.wsUrl} → anvil ${running.chain.anvil.httpUrl}`);
  say(`ingest  ${running.ingest.httpUrl}/metrics   following ${running.streams.heads}, ${running.streams.logs} and venue sim`);
  say(`venue   mqtt ${running.venue.mqttUrl}   http ${running.venue.httpUrl}`);
  say(`ops     stream ${running.opsStream}; operator credential (shown once): ${running.credential}`);

  // By target URL: on a cluster the publisher follows MOVED and failovers itself.
  const publisher = createPublisher({ targets: [running.redisUrl], maxLen: 10_000 });
  closers.push(() => publisher.close());
  const ticks = demoStream.for('ticks');
  let seq = 0;
  const publishTimer = setInterval(() => {
    const n = seq++;
    void publisher.publish(ticks, { seq: n, text: `tick ${n}`, at: new Date().toISOString() }).then((r) => {
      if (!r.ok) say(`publish failed: ${r.error.code}: ${r.error.message}`);
    });
  }, 500);
  publishTimer.unref();
  closers.push(() => clearInterval(publishTimer));

  const exitAfter = config.FLEET_EXIT_AFTER_EVENTS;
  const tail = startFleetTail({
    relayUrl: running.relayUrl,
    authUrl: running.authUrl,
    chainStream: running.streams.heads,
    issue: (stream, subject) => running.issue(stream, subject),
    say,
    onProgress: (seen) => {
      if (exitAfter > 0 && seen.demo >= exitAfter && seen.blocks >= exitAfter) void shutdown(0);
    },
  });
  closers.push(() => tail.close());

  if (config.FLEET_DASHBOARD) {
    say('dashboard building if needed (Vite), then serving…');
    const dashboard = await startFleetDashboard(
      { port: dashboardPort, host: dashboardHost, config: { authUrl: running.authUrl, relayUrl: running.relayUrl } },
      running.credential,
    );
    closers.push(() => dashboard.close());
    say(`dashboard ${dashboard.signedInUrl}`);
  } else {
    say('dashboard not served (FLEET_DASHBOARD=false)');
  }

  const input = createInterface({ input: process.stdin, terminal: false });
  input.on('line', (line) => {
    const command = parseFleetCommand(line);
    if (!command.ok) {
      say(`fleet   ${command.error.message}`);
      return;
    }
    runFleetCommand(running, command.command, say).then(
      (next) => {
        if (next === 'quit') void shutdown(0);
      },
      (error: unknown) => say(`fleet   command failed: ${error instanceof Error ? error.message : String(error)}`),
    );
  });
  // No stdin (a CI job, `< /dev/null`): the fleet keeps running; Ctrl-C or SIGTERM stops it.
  input.on('close', () => {
    if (!stopping) say('fleet   stdin closed: commands are off');
  });

  say('fleet up: publishing demo:ticks every 500 ms and a block every ' + `${config.FLEET_BLOCK_MS} ms; Ctrl-C stops everything`);
  for (const line of FLEET_HELP) say(line);
} catch (error) {
  say(`fleet failed: ${error instanceof Error ? error.message : String(error)}`);
  await shutdown(1);
}
