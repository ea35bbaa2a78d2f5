import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

/*
 * `npm test` after bootstrap: the checks (typecheck, lint, format:check) and vitest at once, so
 * the checks' minute and a half of tsc and eslint overlaps the cross-process tests, which mostly
 * wait on sockets and timers, instead of coming before them. The checks run at a lower CPU
 * priority so the tests keep the cores they ask for, and their output is held and printed as one
 * block once vitest is done, so it never interleaves with vitest's. The files of the serial group
 * assert wall-clock bounds: they wait until the checks are over (test/support/afterChecks.ts
 * polls the file named by STREAMGATE_CHECKS_DONE, written here when the last check ends).
 */

/**
 * @typedef {{ name: string; command: string; args: string[] }} Step
 * @typedef {{ name: string; code: number; seconds: number; output: string }} StepResult
 * @typedef {{
 *   checks: Step[];
 *   tests: Step;
 *   cwd?: string;
 *   env?: NodeJS.ProcessEnv;
 *   niceness?: number;
 *   write?: (text: string) => void;
 * }} SuiteOptions
 */

/** The variable naming the file that exists once every check has ended. */
export const CHECKS_DONE_VARIABLE = 'STREAMGATE_CHECKS_DONE';

/**
 * Runs `tests` with its own stdio and every check beside it with its output held, then prints
 * the checks' outputs as one block and a closing line. Resolves with the exit status npm test
 * should have: 0 only if every check and the tests passed.
 * @param {SuiteOptions} options
 * @returns {Promise<number>}
 */
export async function runSuite({
  checks,
  tests,
  cwd = process.cwd(),
  env = process.env,
  niceness = 10,
  write = (text) => process.stdout.write(text),
}) {
  const dir = mkdtempSync(join(tmpdir(), 'streamgate-checks-'));
  const doneFile = join(dir, 'done');
  try {
    const testsRun = runStep(tests, { cwd, env: { ...env, [CHECKS_DONE_VARIABLE]: doneFile }, hold: false, niceness: 0 });
    const checkResults = await Promise.all(checks.map((check) => runStep(check, { cwd, env, hold: true, niceness })));
    writeFileSync(doneFile, `${JSON.stringify(checkResults.map(({ name, code }) => ({ name, code })))}\n`);
    const testResult = await testsRun;
    write(report(checkResults, testResult));
    return checkResults.every((r) => r.code === 0) && testResult.code === 0 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * @param {StepResult[]} checks
 * @param {StepResult} tests
 * @returns {string}
 */
function report(checks, tests) {
  const verdict = (/** @type {StepResult} */ r) =>
    `${r.name} ${r.code === 0 ? 'passed' : `FAILED (exit status ${r.code})`} in ${r.seconds} s`;
  const lines = ['', `== checks, run beside ${tests.name} (their output held until now)`];
  for (const check of checks) {
    lines.push(`-- ${verdict(check)}`);
    if (check.output.trim() !== '') lines.push(check.output.trimEnd());
  }
  lines.push(`== npm test: ${[...checks, tests].map(verdict).join(', ')}`, '');
  return lines.join('\n');
}

/**
 * @param {Step} step
 * @param {{ cwd: string; env: NodeJS.ProcessEnv; hold: boolean; niceness: number }} how
 * @returns {Promise<StepResult>}
 */
function runStep({ name, command, args }, { cwd, env, hold, niceness }) {
  const started = Date.now();
  // `nice` lowers the priority before the command starts, so every process it forks inherits it.
  const [file, argv] =
    niceness > 0 && process.platform !== 'win32' ? ['nice', ['-n', String(niceness), command, ...args]] : [command, args];
  const child = spawn(file, argv, { cwd, env, stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  /** @type {Buffer[]} */
  const chunks = [];
  child.stdout?.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
  child.stderr?.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
  return new Promise((resolve) => {
    const done = (/** @type {number} */ code, /** @type {string} */ extra) =>
      resolve({ name, code, seconds: Math.round((Date.now() - started) / 1000), output: Buffer.concat(chunks).toString('utf8') + extra });
    child.on('error', (error) => done(127, `${name}: could not start ${file}: ${error.message}\n`));
    child.on('close', (code, signal) => done(code ?? 1, signal === null ? '' : `${name}: ended by ${signal}\n`));
  });
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // The workspace's own pnpm and vitest, also when this script is run outside `npm test`.
  const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` };
  const pnpmRun = (/** @type {string} */ script) => ({ name: script, command: 'pnpm', args: ['run', script] });
  process.exitCode = await runSuite({
    checks: [pnpmRun('typecheck'), pnpmRun('lint'), pnpmRun('format:check')],
    tests: { name: 'vitest', command: 'vitest', args: ['run', '--coverage', ...process.argv.slice(2)] },
    cwd: root,
    env,
  });
}
