/**
 * Which of `@foundry-rs/anvil`'s platform packages holds the anvil binary for a platform and CPU
 * (Node's `process.platform` and `process.arch`), and the binary's path inside it. The table is
 * the optional dependencies of `@foundry-rs/anvil` 1.7.1, the packages npm and pnpm install one
 * of; the unit test checks it against that manifest.
 */
export type AnvilPlatformPackage = { ok: true; name: string; binary: string } | { ok: false; message: string };

const PACKAGES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  darwin: { arm64: '@foundry-rs/anvil-darwin-arm64', x64: '@foundry-rs/anvil-darwin-amd64' },
  linux: { arm64: '@foundry-rs/anvil-linux-arm64', x64: '@foundry-rs/anvil-linux-amd64' },
  win32: { x64: '@foundry-rs/anvil-win32-amd64' },
};

export const ANVIL_PLATFORMS = 'macOS arm64 and x64, Linux arm64 and x64, Windows x64';

export function anvilPlatformPackage(platform: string, arch: string): AnvilPlatformPackage {
  const name = PACKAGES[platform]?.[arch];
  if (name === undefined) {
    return {
      ok: false,
      message: `anvil has no build for ${platform} ${arch} (@foundry-rs/anvil ships ${ANVIL_PLATFORMS}); install Foundry another way (https://getfoundry.sh) and set STREAMGATE_ANVIL to its anvil binary`,
    };
  }
  return { ok: true, name, binary: platform === 'win32' ? 'bin/anvil.exe' : 'bin/anvil' };
}
