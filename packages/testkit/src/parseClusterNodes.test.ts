import { describe, expect, it } from 'vitest';
import { parseClusterNodes } from './parseClusterNodes.js';

// The example of the CLUSTER NODES documentation, with one slot of the first primary migrating.
const TEXT = [
  '07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004,hostname4 slave e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 0 1426238317239 4 connected',
  '67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1 127.0.0.1:30002@31002,hostname2 master - 0 1426238316232 2 connected 5461-10922',
  '292f8b365bb7edb5e285caf0b7e6ddc7265d2f4f 127.0.0.1:30003@31003 master,fail? - 0 1426238318243 3 connected 10923-16383',
  'e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30001@31001,hostname1 myself,master - 0 0 1 connected 0-5459 5460 [5460->-67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1]',
  '',
].join('\n');

describe('parseClusterNodes', () => {
  it('reads id, port, role, primary, epoch, failure flags and slot ranges of every line', () => {
    const [replica, second, third, myself] = parseClusterNodes(TEXT);
    expect(replica).toMatchObject({
      port: 30004,
      isPrimary: false,
      primaryId: 'e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca',
      slots: [],
      failing: false,
    });
    expect(second).toMatchObject({
      id: '67ed2db8d677e59ec4a4cefb06858cf2a1a89fa1',
      port: 30002,
      isPrimary: true,
      primaryId: undefined,
      configEpoch: 2,
    });
    expect(second?.slots).toEqual([[5461, 10922]]);
    expect(third).toMatchObject({ port: 30003, failing: true, slots: [[10923, 16383]] });
    expect(myself?.flags.has('myself')).toBe(true);
    // A migration in progress is not a slot range: slot 5460 is still served by its owner.
    expect(myself?.slots).toEqual([
      [0, 5459],
      [5460, 5460],
    ]);
  });

  it('rejects a line without an address it can read', () => {
    expect(() => parseClusterNodes('abc nowhere master - 0 0 1 connected')).toThrow(/no port/);
  });
});
