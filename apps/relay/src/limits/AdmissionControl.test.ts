import { CloseCode } from '@streamgate/protocol';
import { describe, expect, it } from 'vitest';
import { AdmissionControl } from './AdmissionControl.js';

describe('AdmissionControl', () => {
  it('refuses past the connection cap with overloaded, and admits again after a release', () => {
    let t = 0;
    const ac = new AdmissionControl({ maxConnections: 2, maxConnectionsPerSecond: 100 }, () => t);
    expect(ac.admit().ok).toBe(true);
    expect(ac.admit().ok).toBe(true);
    const refused = ac.admit();
    expect(refused).toMatchObject({ ok: false, limit: 'connections', code: CloseCode.overloaded });
    ac.release();
    t += 1000;
    expect(ac.admit().ok).toBe(true);
    expect(ac.connections).toBe(2);
  });

  it('allows a burst of the per-second rate, then refills at that rate', () => {
    let t = 0;
    const ac = new AdmissionControl({ maxConnections: 1000, maxConnectionsPerSecond: 10 }, () => t);
    for (let i = 0; i < 10; i++) expect(ac.admit().ok).toBe(true);
    expect(ac.admit()).toMatchObject({ ok: false, limit: 'connection_rate', code: CloseCode.connectionRateLimited });
    t += 250; // a quarter second buys 2.5 tokens
    expect(ac.admit().ok).toBe(true);
    expect(ac.admit().ok).toBe(true);
    expect(ac.admit().ok).toBe(false);
    t += 10_000; // the bucket never holds more than one second's worth
    let admitted = 0;
    while (ac.admit().ok) admitted++;
    expect(admitted).toBe(10);
  });

  it('does not count refused sockets as open', () => {
    const ac = new AdmissionControl({ maxConnections: 1, maxConnectionsPerSecond: 1 }, () => 0);
    expect(ac.admit().ok).toBe(true);
    expect(ac.admit().ok).toBe(false);
    ac.release();
    ac.release();
    expect(ac.connections).toBe(0);
  });
});
