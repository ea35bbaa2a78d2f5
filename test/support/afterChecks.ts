import { existsSync, writeFileSync } from 'node:fs';
import { waitFor } from '@streamgate/testkit';

// Setup file of the serial group (vitest.config.ts). `npm test` runs tsc, eslint and prettier
// beside vitest, at a low priority (scripts/runSuite.mjs), and names in STREAMGATE_CHECKS_DONE a
// file it writes once they have all ended. These files assert wall-clock bounds, so the first of
// them waits for it: they run with the machine to themselves, as if the checks had come first.
// STREAMGATE_CHECKS_AWAITED tells the runner the wait began, so it can give the checks their
// priority back. Outside npm test the variables are unset and nothing waits.
const doneFile = process.env.STREAMGATE_CHECKS_DONE;
const awaitedFile = process.env.STREAMGATE_CHECKS_AWAITED;
if (doneFile !== undefined && doneFile !== '' && !existsSync(doneFile)) {
  if (awaitedFile !== undefined && awaitedFile !== '') writeFileSync(awaitedFile, '');
  // The checks take a minute or two, longer on a loaded machine; much longer means one hangs,
  // and the serial files fail here rather than never start.
  await waitFor(() => existsSync(doneFile), {
    timeoutMs: 20 * 60_000,
    intervalMs: 250,
    message: `the checks beside vitest never ended (${doneFile} never written)`,
  });
}
