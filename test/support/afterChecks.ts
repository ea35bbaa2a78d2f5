import { existsSync } from 'node:fs';
import { waitFor } from '@streamgate/testkit';

// Setup file of the serial group (vitest.config.ts). `npm test` runs tsc, eslint and prettier
// beside vitest (scripts/runSuite.mjs) and names, in STREAMGATE_CHECKS_DONE, a file it writes
// once they have all ended. These files assert wall-clock bounds, so the first of them waits for
// it: they run with the machine to themselves, as if the checks had come first. Outside npm test
// the variable is unset and nothing waits.
const doneFile = process.env.STREAMGATE_CHECKS_DONE;
if (doneFile !== undefined && doneFile !== '') {
  // The checks take a minute or two, longer at a low priority on a loaded machine; much longer
  // means a check hangs, and the serial files fail here rather than never start.
  await waitFor(() => existsSync(doneFile), {
    timeoutMs: 15 * 60_000,
    intervalMs: 250,
    message: `the checks beside vitest never ended (${doneFile} never written)`,
  });
}
