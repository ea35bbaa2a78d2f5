import { spawnSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { z } from 'zod';

/**
 * Which Node runs the apps a test spawns, and where the relay runs. By default both are this
 * process's Node on this host. The same cross-process tests run the apps on another Node with
 * STREAMGATE_APP_NODE (a node binary; scripts/debianUserland.mjs fetches 22 and 24), and the
 * relay — whose uWS binaries for Node 22/24 need glibc >= 2.38 — inside a newer userland with
 * STREAMGATE_RELAY_CHROOT (a root directory that sees this checkout, /tmp and the node binary
 * at the same paths; the script mounts it). The test runner itself stays on this Node.
 * STREAMGATE_APP_BUILD is a directory of apps bundled once per test run (buildApps.ts; the e2e
 * projects' global setup sets it): apps start from there instead of compiling through tsx.
 */
const runtimeEnv = z.object({
  STREAMGATE_APP_NODE: z
    .string()
    .refine(isAbsolute, 'must be an absolute path to a node binary')
    .refine(isExecutableFile, 'is not an executable file')
    .optional(),
  STREAMGATE_RELAY_CHROOT: z
    .string()
    .refine(isAbsolute, 'must be an absolute path to a root directory (scripts/debianUserland.mjs sets it)')
    .refine(isDirectory, 'is not a directory')
    .optional(),
  STREAMGATE_APP_BUILD: z
    .string()
    .refine(isAbsolute, 'must be an absolute path to a directory of bundled apps (buildApps.ts)')
    .refine(isDirectory, 'is not a directory')
    .optional(),
});

export interface AppRuntime {
  /** The node binary apps run on. */
  readonly node: string;
  /** The root directory the relay runs in, if not this host's. */
  readonly relayChroot: string | undefined;
  /** The directory of apps bundled for this run, if any; otherwise apps run from source via tsx. */
  readonly appBuild: string | undefined;
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    // Missing or not executable: the refinement's message says which variable and why.
    return false;
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    // Missing: reported by the refinement.
    return false;
  }
}

/** Parses the two variables; throws naming the variable when one is set wrongly. */
export function parseAppRuntime(env: Readonly<Record<string, string | undefined>>): AppRuntime {
  const blankAsUnset = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value);
  const parsed = runtimeEnv.safeParse({
    STREAMGATE_APP_NODE: blankAsUnset(env.STREAMGATE_APP_NODE),
    STREAMGATE_RELAY_CHROOT: blankAsUnset(env.STREAMGATE_RELAY_CHROOT),
    STREAMGATE_APP_BUILD: blankAsUnset(env.STREAMGATE_APP_BUILD),
  });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`testkit app runtime: ${problems.join('; ')}`);
  }
  return {
    node: parsed.data.STREAMGATE_APP_NODE ?? process.execPath,
    relayChroot: parsed.data.STREAMGATE_RELAY_CHROOT,
    appBuild: parsed.data.STREAMGATE_APP_BUILD,
  };
}

let cached: AppRuntime | undefined;

/** The runtime from this process's environment, parsed once. */
export function appRuntime(): AppRuntime {
  cached ??= parseAppRuntime(process.env);
  return cached;
}

let version: string | undefined;

/** `node --version` of the Node apps run on, e.g. `v24.22.3`. */
export function appNodeVersion(): string {
  const { node } = appRuntime();
  if (node === process.execPath) return process.version;
  if (version !== undefined) return version;
  const result = spawnSync(node, ['--version'], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${node} --version failed: ${result.error?.message ?? result.stderr}`);
  version = result.stdout.trim();
  return version;
}

/**
 * The command line that runs `node args` for an app: on the runtime's Node, and for the relay
 * inside its chroot when one is set (chroot, then env -C back into the same working directory).
 */
export function appCommand(
  args: readonly string[],
  options: { relay: boolean; cwd: string },
  runtime: AppRuntime = appRuntime(),
): { command: string; args: string[] } {
  const { node, relayChroot } = runtime;
  if (!options.relay || relayChroot === undefined) return { command: node, args: [...args] };
  return { command: 'chroot', args: [relayChroot, '/usr/bin/env', '-C', options.cwd, node, ...args] };
}
