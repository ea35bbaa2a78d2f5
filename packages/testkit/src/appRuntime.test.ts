import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { appCommand, parseAppRuntime } from './appRuntime.js';

const root = mkdtempSync(join(tmpdir(), 'app-runtime-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('parseAppRuntime', () => {
  it('runs the apps on this Node on this host when neither variable is set (blank counts as unset)', () => {
    expect(parseAppRuntime({})).toEqual({ node: process.execPath, relayChroot: undefined, appBuild: undefined });
    expect(parseAppRuntime({ STREAMGATE_APP_NODE: ' ', STREAMGATE_RELAY_CHROOT: '', STREAMGATE_APP_BUILD: ' ' })).toEqual({
      node: process.execPath,
      relayChroot: undefined,
      appBuild: undefined,
    });
  });

  it('names the variable and what is wrong with it', () => {
    expect(() => parseAppRuntime({ STREAMGATE_APP_NODE: 'node' })).toThrow(
      'testkit app runtime: STREAMGATE_APP_NODE: must be an absolute path to a node binary',
    );
    expect(() => parseAppRuntime({ STREAMGATE_APP_NODE: root })).toThrow('STREAMGATE_APP_NODE: is not an executable file');
    expect(() => parseAppRuntime({ STREAMGATE_RELAY_CHROOT: join(root, 'missing') })).toThrow(
      'STREAMGATE_RELAY_CHROOT: is not a directory',
    );
    expect(() => parseAppRuntime({ STREAMGATE_APP_BUILD: 'build' })).toThrow('STREAMGATE_APP_BUILD: must be an absolute path');
    expect(() => parseAppRuntime({ STREAMGATE_APP_BUILD: join(root, 'missing') })).toThrow('STREAMGATE_APP_BUILD: is not a directory');
    expect(parseAppRuntime({ STREAMGATE_APP_BUILD: root }).appBuild).toBe(root);
  });
});

describe('appCommand', () => {
  const runtime = parseAppRuntime({ STREAMGATE_APP_NODE: process.execPath, STREAMGATE_RELAY_CHROOT: root });

  it('runs an app on the runtime Node directly, and the relay through chroot back into the same directory', () => {
    expect(appCommand(['main.ts'], { relay: false, cwd: '/repo' }, runtime)).toEqual({ command: process.execPath, args: ['main.ts'] });
    expect(appCommand(['main.ts'], { relay: true, cwd: '/repo' }, runtime)).toEqual({
      command: 'chroot',
      args: [root, '/usr/bin/env', '-C', '/repo', process.execPath, 'main.ts'],
    });
  });

  it('runs the relay on the host when no chroot is set', () => {
    const hostOnly = parseAppRuntime({});
    expect(appCommand(['main.ts'], { relay: true, cwd: '/repo' }, hostOnly)).toEqual({ command: process.execPath, args: ['main.ts'] });
  });
});
