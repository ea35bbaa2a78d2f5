import { createRequire } from 'node:module';

type Uws = typeof import('uWebSockets.js');

/**
 * The builds the relay loads (docs/platforms.md). `uWebSockets.js` carries ABI 115/127/137/141
 * for linux x64/arm64, darwin x64/arm64 and win32 x64, but its linux binaries need glibc >= 2.38,
 * for Node 20 too. On Node 20 with an older glibc (Debian 12, Ubuntu 22.04) the earlier build,
 * whose Node 20 binaries need glibc 2.34, is loaded instead.
 */
const BUILDS = [
  { module: 'uWebSockets.js', build: '@btc-vision/uwebsockets.js@20.57.0', abis: ['115', '127', '137', '141'] },
  { module: 'uWebSockets.js-node20', build: '@trufflesuite/uws-js-unofficial@20.30.0-unofficial.0', abis: ['115'] },
] as const;

const NODE_OF_ABI: Readonly<Record<string, string>> = { '115': 'Node 20', '127': 'Node 22', '137': 'Node 24', '141': 'Node 25' };

export const UWS_PLATFORM_MATRIX =
  'The relay runs natively on Node 20 (ABI 115), 22 (ABI 127), 24 (ABI 137) or 25 (ABI 141) × ' +
  'linux (glibc) x64/arm64, macOS x64/arm64 or windows x64; on linux, Node 22/24/25 need glibc >= 2.38 ' +
  '(Debian 13, Ubuntu 24.04) and Node 20 needs glibc >= 2.34; musl (Alpine) is not supported. See docs/platforms.md';

/** What this process is, in the terms of the matrix. */
export function thisPlatform(): string {
  const glibc = glibcVersion();
  const node = NODE_OF_ABI[process.versions.modules] ?? 'an unsupported Node';
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

/** The file a build loads for this process (uws_<platform>_<arch>_<abi>.node). */
export function uwsBinaryName(): string {
  return `uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
}

export class UwsUnavailableError extends Error {
  override readonly name = 'UwsUnavailableError';
  readonly code = 'uws_unavailable';
  readonly retryable = false;
}

export interface LoadedUws {
  readonly uws: Uws;
  /** The registry build that loaded, e.g. `@btc-vision/uwebsockets.js@20.57.0`. */
  readonly build: string;
  readonly binary: string;
}

let loaded: LoadedUws | undefined;

/**
 * Loads uWebSockets.js or refuses with the platform matrix. `uWebSockets.js` has no JavaScript
 * fallback (it throws when its binary cannot load); the Node 20 build falls back to a `ws` shim
 * after a warning, and a module without `SSLApp` is that shim: refused as well, since the relay's
 * limits and backpressure are uWS's own.
 */
export function loadUws(): LoadedUws {
  if (loaded !== undefined) return loaded;
  const require = createRequire(import.meta.url);
  const tried: string[] = [];
  for (const { module, build, abis } of BUILDS) {
    if (!(abis as readonly string[]).includes(process.versions.modules)) continue;
    let uws: Uws;
    try {
      uws = require(module) as Uws;
    } catch (error) {
      tried.push(`${build}: ${error instanceof Error ? error.message.split('\n').join(' ') : String(error)}`);
      continue;
    }
    if (!('SSLApp' in uws)) {
      tried.push(`${build}: loaded its JavaScript fallback, not a native binary`);
      continue;
    }
    loaded = { uws, build, binary: uwsBinaryName() };
    return loaded;
  }
  throw new UwsUnavailableError(
    `uWebSockets.js could not load a native binary ${uwsBinaryName()} for ${thisPlatform()}; refusing to start. ` +
      `${UWS_PLATFORM_MATRIX}. ${tried.length === 0 ? 'No build carries this ABI.' : `Tried: ${tried.join(' | ')}`}`,
  );
}
