// What bootstrap does about a missing system tool, decided from facts about the host alone, so
// each platform's answer is unit-tested (scripts/installAdvice.test.ts) on any machine. Node's
// standard library only: bootstrap runs before any dependency is installed.

/**
 * @typedef {'redis-server' | 'chromium'} SystemTool
 * @typedef {{ platform: string; root: boolean; debian: boolean; apt: boolean }} Host
 *   `platform` is `process.platform`; `debian` means /etc/debian_version exists; `apt` that
 *   apt-get runs.
 * @typedef {{ kind: 'apt'; packages: string[]; howTo: string } | { kind: 'tell'; howTo: string }} InstallAdvice
 *   `apt`: bootstrap installs `packages` itself (`howTo` is shown if that fails); `tell`: it stops
 *   and prints `howTo`.
 */

const REDIS_WHY = 'redis-server (Redis 7) is required on PATH: the tests and `npm run fleet` start private servers from it.';
const REDIS_NOTE = 'A system Redis service on port 6379 is not used and need not run.';
const CHROMIUM_WHY = 'Chromium is required for the browser tests (test/browser/); playwright-core drives it and downloads no browser.';

/**
 * @param {SystemTool} tool
 * @param {Host} host
 * @param {string} chromiumPath where the tests look for Chromium (STREAMGATE_CHROMIUM or the default)
 * @returns {InstallAdvice}
 */
export function installAdvice(tool, host, chromiumPath) {
  const canApt = host.platform === 'linux' && host.root && host.debian && host.apt;
  if (tool === 'redis-server') {
    if (host.platform === 'darwin') {
      return { kind: 'tell', howTo: lines(REDIS_WHY, '  macOS: brew install redis   (Homebrew: https://brew.sh)', REDIS_NOTE) };
    }
    if (host.platform === 'win32') {
      return {
        kind: 'tell',
        howTo: lines(
          REDIS_WHY,
          '  Windows: Redis has no native build; run the repository inside WSL 2 (Ubuntu) and install it there:',
          '    sudo apt-get install -y redis-server',
        ),
      };
    }
    const howTo = lines(
      REDIS_WHY,
      host.debian
        ? '  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y redis-server'
        : '  Debian/Ubuntu: sudo apt-get install -y redis-server',
      '  Fedora/RHEL:   sudo dnf install -y redis',
      '  Alpine:        apk add redis',
      '  Arch:          sudo pacman -S redis',
      REDIS_NOTE,
    );
    return canApt ? { kind: 'apt', packages: ['redis-server'], howTo } : { kind: 'tell', howTo };
  }
  const where = `expected at ${chromiumPath}`;
  if (host.platform === 'darwin') {
    return {
      kind: 'tell',
      howTo: lines(
        `${CHROMIUM_WHY} It is ${where}.`,
        '  macOS: brew install --cask chromium, then',
        '    export STREAMGATE_CHROMIUM=/Applications/Chromium.app/Contents/MacOS/Chromium',
        '  or use an installed Chrome:',
        '    export STREAMGATE_CHROMIUM="/Applications/Google Chrome.app/Contents/MacOS/Google Chrome"',
      ),
    };
  }
  const howTo = lines(
    `${CHROMIUM_WHY} It is ${where}.`,
    '  Debian/Ubuntu: sudo apt-get update && sudo apt-get install -y chromium',
    '  Elsewhere: install Chromium or Chrome and set STREAMGATE_CHROMIUM to its executable.',
  );
  // A font, so that the screenshots the tests keep show text; the rest of chromium's
  // recommendations (printing, sandbox helper, desktop services) are of no use headless.
  return canApt ? { kind: 'apt', packages: ['chromium', 'fonts-dejavu-core'], howTo } : { kind: 'tell', howTo };
}

/** @param {string[]} parts */
function lines(...parts) {
  return parts.join('\n');
}
