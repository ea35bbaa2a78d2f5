import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';

/*
 * `npm test` after bootstrap: the checks (typecheck, lint, format:check) and vitest at once, so
 * the checks' minute and a half of tsc and eslint overlaps the cross-process tests, which mostly
 * wait on sockets and timers, instead of coming before them. The checks run at a lower CPU
 * priority so the tests keep the cores they ask for, and their output is held and printed as one
 * block once vitest is done, so it never interleaves with vitest's. The files of the serial group
 * assert wall-clock bounds: they wait until the checks are over (test/support/afterChecks.ts
 * writes the file named by STREAMGATE_CHECKS_AWAITED and polls the one named by
 * STREAMGATE_CHECKS_DONE, written here when the last check ends).
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
/** The variable naming the file the serial group writes when it starts waiting for the checks. */
export const CHECKS_AWAITED_VARIABLE = 'STREAMGATE_CHECKS_AWAITED';

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
  const awaitedFile = join(dir, 'awaited');
  try {
    const testsEnv = { ...env, [CHECKS_DONE_VARIABLE]: doneFile, [CHECKS_AWAITED_VARIABLE]: awaitedFile };
    const testsRun = runStep(tests, { cwd, env: testsEnv, hold: false, niceness: 0 });
    const running = checks.map((check) => runStep(check, { cwd, env, hold: true, niceness }));
    /** @type {string[]} */
    const notes = [];
    // Once the serial group waits, nothing of ours needs the cores more than the checks: they get
    // their priority back where the OS allows raising it (as root, as CI runs); elsewhere they
    // finish niced, which costs only what other programs on the machine take from them.
    const watch = setInterval(() => {
      if (!existsSync(awaitedFile)) return;
      clearInterval(watch);
      const restored = running.filter((step) => step.running() && restorePriority(step.pid));
      if (restored.length > 0) notes.push(`(priority restored for ${restored.map((s) => s.name).join(', ')} once the serial files waited)`);
    }, 250);
    const checkResults = await Promise.all(running.map((step) => step.result));
    clearInterval(watch);
    writeFileSync(doneFile, `${JSON.stringify(checkResults.map(({ name, code }) => ({ name, code })))}\n`);
    const testResult = await testsRun.result;
    write(report(checkResults, testResult, notes));
    return checkResults.every((r) => r.code === 0) && testResult.code === 0 ? 0 : 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * @param {number | undefined} pid
 * @returns {boolean} whether it now runs at this process's priority
 */
function restorePriority(pid) {
  if (pid === undefined) return false;
  try {
    setPriority(pid, getPriority());
    return true;
  } catch (error) {
    // EACCES without the privilege to raise a priority, ESRCH if it just ended: it stays as it was.
    if (error instanceof Error && 'code' in error && (error.code === 'EACCES' || error.code === 'EPERM' || error.code === 'ESRCH'))
      return false;
    throw error;
  }
}

/**
 * @param {StepResult[]} checks
 * @param {StepResult} tests
 * @param {string[]} notes
 * @returns {string}
 */
function report(checks, tests, notes) {
  const verdict = (/** @type {StepResult} */ r) =>
    `${r.name} ${r.code === 0 ? 'passed' : `FAILED (exit status ${r.code})`} in ${r.seconds} s`;
  const lines = ['', `== checks, run beside ${tests.name} (their output held until now)`, ...notes];
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
 * @returns {{ name: string; pid: number | undefined; running: () => boolean; result: Promise<StepResult> }}
 */
function runStep({ name, command, args }, { cwd, env, hold, niceness }) {
  const started = Date.now();
  // `nice` lowers the priority before the command starts and then execs it, so the pid is the
  // command's own (its priority can be raised again) and whatever it forks inherits it.
  const [file, argv] =
    niceness > 0 && process.platform !== 'win32' ? ['nice', ['-n', String(niceness), command, ...args]] : [command, args];
  const child = spawn(file, argv, { cwd, env, stdio: hold ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
  /** @type {Buffer[]} */
  const chunks = [];
  child.stdout?.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
  child.stderr?.on('data', (/** @type {Buffer} */ chunk) => chunks.push(chunk));
  let ended = false;
  /** @type {Promise<StepResult>} */
  const result = new Promise((resolve) => {
    const done = (/** @type {number} */ code, /** @type {string} */ extra) => {
      ended = true;
      resolve({
        name,
        code,
        seconds: Math.round((Date.now() - started) / 1000),
        output: Buffer.concat(chunks).toString('utf8') + extra,
      });
    };
    child.on('error', (error) => done(127, `${name}: could not start ${file}: ${error.message}\n`));
    child.on('close', (code, signal) => done(code ?? 1, signal === null ? '' : `${name}: ended by ${signal}\n`));
  });
  return { name, pid: child.pid, running: () => !ended, result };
}

/**
 * A package.json script as a step of its own, run without a shell or pnpm in between, so the
 * step's pid is the tool's and its priority can be raised again.
 * @param {string} name
 * @param {string | undefined} script
 * @returns {Step}
 */
export function scriptStep(name, script) {
  if (script === undefined || !/^[\w./:=@-]+( [\w./:=@-]+)*$/.test(script)) {
    throw new Error(`package.json script "${name}" must be one command with plain arguments, not ${JSON.stringify(script)}`);
  }
  const [command = '', ...args] = script.split(' ');
  return { name, command, args };
}

const isMain = process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  // The workspace's own tools, also when this script is run outside `npm test`.
  const env = { ...process.env, PATH: `${join(root, 'node_modules', '.bin')}${delimiter}${process.env.PATH ?? ''}` };
  /** @type {unknown} */
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const { scripts } = /** @type {{ scripts: Record<string, string> }} */ (manifest);
  process.exitCode = await runSuite({
    checks: ['typecheck', 'lint', 'format:check'].map((name) => scriptStep(name, scripts[name])),
    tests: { name: 'vitest', command: 'vitest', args: ['run', '--coverage', ...process.argv.slice(2)] },
    cwd: root,
    env,
  });
}
