import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

// Test runners end their workers with signals, and a killed worker runs no `exit` handler: a
// redis-server it started would be orphaned and keep its port for good (seen with vitest's fork
// pool). On Linux, util-linux `setpriv --pdeathsig SIGKILL` makes the kernel kill the child when
// the thread that spawned it dies, however it dies; setpriv then execs the command, so the pid,
// signals and exit status are the command's own. Elsewhere the `exit` hook in childRegistry is
// the only guard.
let setprivPath: string | null | undefined;

function findSetpriv(): string | null {
  if (setprivPath !== undefined) return setprivPath;
  setprivPath = null;
  if (process.platform !== 'linux' || process.env.STREAMGATE_TESTKIT_NO_PDEATHSIG === '1') return setprivPath;
  const path = findOnPath('setpriv');
  if (path === null) return setprivPath;
  const help = spawnSync(path, ['--help'], { encoding: 'utf8' });
  if (help.status === 0 && help.stdout.includes('--pdeathsig')) setprivPath = path;
  return setprivPath;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    // Not there or not executable: the caller reports ENOENT for the command as a whole.
    return false;
  }
}

/** The command's absolute path as PATH (or `pathEnv`) resolves it, or null if there is none. */
export function findOnPath(command: string, pathEnv = process.env.PATH ?? ''): string | null {
  if (command.includes('/')) return isExecutable(command) || !isAbsolute(command) ? command : null;
  for (const dir of pathEnv.split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, command);
    if (isExecutable(candidate)) return candidate;
  }
  return null;
}

/**
 * The command line that runs `command args` so that it dies with its parent, when the platform
 * allows it. The command is resolved first, because behind setpriv a missing command would no
 * longer fail the spawn with ENOENT but exit 127 with setpriv's own message.
 */
export function guardedCommand(
  command: string,
  args: readonly string[],
  pathEnv?: string,
): { command: string; args: string[] } | { missing: true } {
  const setpriv = findSetpriv();
  if (setpriv === null) return { command, args: [...args] };
  const resolved = findOnPath(command, pathEnv);
  if (resolved === null) return { missing: true };
  return { command: setpriv, args: ['--pdeathsig', 'SIGKILL', '--', resolved, ...args] };
}
