import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { getPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CHECKS_DONE_VARIABLE, runSuite } from './runSuite.mjs';

/** A step that runs `code` in a fresh Node. @param {string} name @param {string} code */
const node = (name, code) => ({ name, command: process.execPath, args: ['-e', code] });

let dir = '';
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'run-suite-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** @param {Parameters<typeof runSuite>[0]} options */
async function run(options) {
  let printed = '';
  const status = await runSuite({ ...options, write: (text) => (printed += text) });
  return { status, printed };
}

describe('runSuite', () => {
  it('prints each check with its output, held until the tests end, and passes when all pass', async () => {
    const { status, printed } = await run({
      checks: [node('typecheck', 'console.log("no type errors")'), node('lint', 'console.error("lint says"); console.log("nothing")')],
      tests: node('vitest', ''),
    });
    expect(status).toBe(0);
    expect(printed).toMatch(/^\n== checks, run beside vitest/);
    expect(printed).toMatch(/-- typecheck passed in \d+ s\nno type errors\n-- lint passed in \d+ s\nlint says\nnothing\n/);
    expect(printed).toMatch(/\n== npm test: typecheck passed in \d+ s, lint passed in \d+ s, vitest passed in \d+ s\n$/);
  });

  it('fails when a check fails, naming it, though the tests passed; and when the tests fail', async () => {
    const failingCheck = await run({ checks: [node('lint', 'process.exit(3)'), node('typecheck', '')], tests: node('vitest', '') });
    expect(failingCheck.status).toBe(1);
    expect(failingCheck.printed).toContain('-- lint FAILED (exit status 3) in ');
    expect(failingCheck.printed).toContain('-- typecheck passed in ');
    const failingTests = await run({ checks: [node('lint', '')], tests: node('vitest', 'process.exit(1)') });
    expect(failingTests.status).toBe(1);
    expect(failingTests.printed).toContain('vitest FAILED (exit status 1)');
    const missing = await run({
      checks: [{ name: 'lint', command: join(dir, 'no-such-tool'), args: [] }],
      tests: node('vitest', ''),
      niceness: 0,
    });
    expect(missing.status).toBe(1);
    expect(missing.printed).toMatch(/-- lint FAILED \(exit status 127\) in \d+ s\nlint: could not start .*no-such-tool/);
  });

  it('runs the tests beside the checks, and writes the done file only once the last check has ended', async () => {
    const slowEnded = join(dir, 'slow-ended');
    const donePath = join(dir, 'done-path');
    // The tests start before the slow check ends, and see the done file only after it.
    const tests = node(
      'vitest',
      `const fs = require('node:fs');
       const done = process.env.${CHECKS_DONE_VARIABLE};
       if (!done || fs.existsSync(done) || fs.existsSync(${JSON.stringify(slowEnded)})) process.exit(10);
       fs.writeFileSync(${JSON.stringify(donePath)}, done);
       const deadline = Date.now() + 20000;
       const poll = () => {
         if (fs.existsSync(done)) process.exit(fs.existsSync(${JSON.stringify(slowEnded)}) ? 0 : 11);
         if (Date.now() > deadline) process.exit(12);
         setTimeout(poll, 20);
       };
       poll();`,
    );
    const slow = node('lint', `setTimeout(() => require('node:fs').writeFileSync(${JSON.stringify(slowEnded)}, ''), 1500)`);
    const { status, printed } = await run({ checks: [node('format:check', ''), slow], tests });
    expect(printed).toContain('vitest passed');
    expect(status).toBe(0);
    // And it cleans up after itself.
    expect(existsSync(readFileSync(donePath, 'utf8'))).toBe(false);
  });

  it('runs the checks at a lower priority than the tests', async () => {
    if (process.platform === 'win32') return;
    const niceOf = 'console.log(require("node:os").getPriority())';
    const { printed } = await run({ checks: [node('typecheck', niceOf)], tests: node('vitest', ''), niceness: 7 });
    expect(printed).toMatch(new RegExp(`-- typecheck passed in \\d+ s\n${Math.min(19, getPriority() + 7)}\n`));
  });
});
