import { createRequire } from 'node:module';

type Uws = typeof import('uWebSockets.js');

/**
 * Where the pinned build has a native binary (docs/platforms.md). Node ABI → Node major; each is
 * built for linux x64/arm64 (glibc), darwin x64/arm64 and win32 x64.
 */
const SUPPORTED_ABIS: Readonly<Record<string, string>> = { '115': 'Node 20', '127': 'Node 22', '137': 'Node 24', '141': 'Node 25' };

export const UWS_PLATFORM_MATRIX =
  'The relay runs natively on Node 20 (ABI 115), 22 (ABI 127), 24 (ABI 137) or 25 (ABI 141) × ' +
  'linux (glibc) x64/arm64, macOS x64/arm64 or windows x64; on linux, Node 22/24/25 need glibc >= 2.38 ' +
  '(Debian 13, Ubuntu 24.04) and Node 20 needs glibc >= 2.27; musl (Alpine) is not supported. See docs/platforms.md';

/** What this process is, in the terms of the matrix. */
export function thisPlatform(): string {
  const glibc = glibcVersion();
  const node = SUPPORTED_ABIS[process.versions.modules] ?? 'an unsupported Node';
  return (
    `Node ${process.version} (ABI ${process.versions.modules}, ${node}) on ${process.platform} ${process.arch}` +
    (process.platform === 'linux' ? `, ${glibc === undefined ? 'no glibc (musl?)' : `glibc ${glibc}`}` : '')
  );
}

function glibcVersion(): string | undefined {
  const report = process.report.getReport() as { header?: { glibcVersionRuntime?: unknown } };
  const version = report.header?.glibcVersionRuntime;
  return typeof version === 'string' ? version : undefined;
}

/** The file the package loads for this process (uws_<platform>_<arch>_<abi>.node). */
export function uwsBinaryName(): string {
  return `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
}

export class UwsUnavailableError extends Error {
  override readonly name = 'UwsUnavailableError';
  readonly code = 'uws_unavailable';
  readonly retryable = false;
}

/**
 * Loads uWebSockets.js or refuses with the platform matrix. The pinned build has no JavaScript
 * fallback (it throws when its binary cannot load); a build that does fall back to a `ws` shim
 * (no `SSLApp`) is refused as well: the relay's limits and backpressure are uWS's own.
 */
export function loadUws(): Uws {
  let uws: Uws;
  try {
    uws = createRequire(import.meta.url)('uWebSockets.js') as Uws;
  } catch (error) {
    throw new UwsUnavailableError(
      `uWebSockets.js could not load its native binary ${uwsBinaryName()} for ${thisPlatform()}; refusing to start. ` +
        `${UWS_PLATFORM_MATRIX}. Loader said: ${error instanceof Error ? error.message.split('\n').join(' ') : String(error)}`,
      { cause: error },
    );
  }
  if (!('SSLApp' in uws)) {
    throw new UwsUnavailableError(
      `uWebSockets.js loaded a JavaScript fallback, not its native binary, for ${thisPlatform()}; refusing to start. ${UWS_PLATFORM_MATRIX}.`,
    );
  }
  return uws;
}
