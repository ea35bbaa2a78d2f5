import { describe, expect, it } from 'vitest';
import { installAdvice } from './installAdvice.mjs';

/** @param {Partial<import('./installAdvice.mjs').Host>} facts @returns {import('./installAdvice.mjs').Host} */
const host = (facts) => ({ platform: 'linux', root: false, debian: false, apt: false, ...facts });
const CHROMIUM = '/usr/bin/chromium';

describe('installAdvice', () => {
  it('installs with apt-get only as root on Debian with apt-get', () => {
    const debianRoot = host({ root: true, debian: true, apt: true });
    expect(installAdvice('redis-server', debianRoot, CHROMIUM)).toMatchObject({ kind: 'apt', packages: ['redis-server'] });
    expect(installAdvice('chromium', debianRoot, CHROMIUM)).toMatchObject({ kind: 'apt', packages: ['chromium', 'fonts-dejavu-core'] });
    for (const facts of [
      { debian: true, apt: true },
      { root: true, apt: true },
      { root: true, debian: true },
    ]) {
      expect(installAdvice('redis-server', host(facts), CHROMIUM).kind).toBe('tell');
      expect(installAdvice('chromium', host(facts), CHROMIUM).kind).toBe('tell');
    }
  });

  it('tells a Debian user without root the apt-get line, and other Linux users their package manager', () => {
    expect(installAdvice('redis-server', host({ debian: true, apt: true }), CHROMIUM).howTo).toContain(
      'sudo apt-get update && sudo apt-get install -y redis-server',
    );
    const fedora = installAdvice('redis-server', host({}), CHROMIUM).howTo;
    expect(fedora).toContain('sudo dnf install -y redis');
    expect(fedora).toContain('apk add redis');
  });

  it('on macOS says brew, never apt-get, even as root', () => {
    for (const root of [false, true]) {
      const mac = host({ platform: 'darwin', root });
      const redis = installAdvice('redis-server', mac, CHROMIUM);
      expect(redis.kind).toBe('tell');
      expect(redis.howTo).toContain('brew install redis');
      expect(redis.howTo).not.toContain('apt-get');
      const chromium = installAdvice('chromium', mac, CHROMIUM);
      expect(chromium.kind).toBe('tell');
      expect(chromium.howTo).toContain('brew install --cask chromium');
      expect(chromium.howTo).toContain('STREAMGATE_CHROMIUM=');
      expect(chromium.howTo).not.toContain('apt-get');
    }
  });

  it('on Windows points at WSL 2', () => {
    const advice = installAdvice('redis-server', host({ platform: 'win32' }), CHROMIUM);
    expect(advice.kind).toBe('tell');
    expect(advice.howTo).toContain('WSL 2');
  });

  it('names where the tests look for Chromium', () => {
    expect(installAdvice('chromium', host({}), '/opt/chrome/chrome').howTo).toContain('expected at /opt/chrome/chrome');
  });
});
