import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { anvilPlatformPackage } from './anvilPlatformPackage.js';
import { anvilBinary } from './startAnvil.js';

describe('anvilPlatformPackage', () => {
  it.each([
    ['darwin', 'arm64', '@foundry-rs/anvil-darwin-arm64', 'bin/anvil'],
    ['darwin', 'x64', '@foundry-rs/anvil-darwin-amd64', 'bin/anvil'],
    ['linux', 'arm64', '@foundry-rs/anvil-linux-arm64', 'bin/anvil'],
    ['linux', 'x64', '@foundry-rs/anvil-linux-amd64', 'bin/anvil'],
    ['win32', 'x64', '@foundry-rs/anvil-win32-amd64', 'bin/anvil.exe'],
  ])('picks the package of %s %s', (platform, arch, name, binary) => {
    expect(anvilPlatformPackage(platform, arch)).toEqual({ ok: true, name, binary });
  });

  it.each([
    ['win32', 'arm64'],
    ['linux', 'ia32'],
    ['freebsd', 'x64'],
    ['darwin', 'ppc64'],
  ])('refuses %s %s, naming the platforms that have a build', (platform, arch) => {
    const choice = anvilPlatformPackage(platform, arch);
    expect(choice.ok).toBe(false);
    if (!choice.ok) {
      expect(choice.message).toContain(`${platform} ${arch}`);
      expect(choice.message).toContain('macOS arm64 and x64, Linux arm64 and x64, Windows x64');
      expect(choice.message).toContain('STREAMGATE_ANVIL');
    }
  });

  it("matches @foundry-rs/anvil's optional dependencies, one package per platform", () => {
    const require = createRequire(import.meta.url);
    const manifest = JSON.parse(readFileSync(require.resolve('@foundry-rs/anvil/package.json'), 'utf8')) as {
      optionalDependencies: Record<string, string>;
    };
    const table = [
      ['darwin', 'arm64'],
      ['darwin', 'x64'],
      ['linux', 'arm64'],
      ['linux', 'x64'],
      ['win32', 'x64'],
    ].map(([platform = '', arch = '']) => {
      const choice = anvilPlatformPackage(platform, arch);
      return choice.ok ? choice.name : choice.message;
    });
    expect(table.sort()).toEqual(Object.keys(manifest.optionalDependencies).sort());
  });

  it('finds the binary installed for this machine', () => {
    expect(existsSync(anvilBinary())).toBe(true);
  });
});
