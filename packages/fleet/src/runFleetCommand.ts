import { demoStream } from '@streamgate/auth';
import type { FleetCommand } from './parseFleetCommand.js';
import { FLEET_HELP } from './parseFleetCommand.js';
import type { FullFleet } from './startFullFleet.js';

/** Carries out one parsed command against the running fleet; resolves 'quit' when asked to stop. */
export async function runFleetCommand(fleet: FullFleet, command: FleetCommand, say: (line: string) => void): Promise<'quit' | undefined> {
  const report = (result: { ok: boolean; message: string }) => say(`fleet   ${result.ok ? '' : 'refused: '}${result.message}`);
  switch (command.op) {
    case 'nothing':
      return undefined;
    case 'help':
      for (const line of FLEET_HELP) say(line);
      return undefined;
    case 'quit':
      return 'quit';
    case 'cut':
      report(fleet.cutProvider(command.provider, command.only));
      return undefined;
    case 'restore':
      report(fleet.restoreProvider(command.provider, command.only));
      return undefined;
    case 'drain':
      if (command.replace) say(`fleet   starting a replacement before draining ${command.relay}…`);
      report(await fleet.drainRelay(command.relay, { replace: command.replace }));
      return undefined;
    case 'kill-primary':
      report(await fleet.killPrimary(command.stream ?? demoStream.for('ticks').name));
      return undefined;
    case 'restart-nodes':
      report(await fleet.restartNodes());
      return undefined;
    case 'status':
      for (const relay of fleet.relays) say(`status  ${relay.name} ${relay.state} ${relay.url}`);
      for (const [name, mode] of fleet.providerModes) say(`status  provider ${name} ${mode}`);
      for (const stream of [fleet.streams.heads, fleet.streams.logs]) {
        say(`status  ${stream} ${fleet.ingestWatch.state(stream) ?? 'not served'}, ${fleet.ingestWatch.failovers(stream)} failover(s)`);
      }
      say(`status  viewers: ${fleet.viewers.events} events received, ${fleet.viewers.errors} errors`);
      return undefined;
  }
}
