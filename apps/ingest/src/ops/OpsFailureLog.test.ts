import { describe, expect, it } from 'vitest';
import { OpsFailureLog } from './OpsFailureLog.js';

function setup() {
  const warnings: { obj: object; msg: string }[] = [];
  const counted: string[] = [];
  let now = 0;
  const log = {
    info: () => undefined,
    warn: (obj: object, msg: string) => void warnings.push({ obj, msg }),
    error: () => undefined,
  };
  const failures = new OpsFailureLog(
    log,
    (code) => counted.push(code),
    60_000,
    () => now,
  );
  return { failures, warnings, counted, advance: (ms: number) => (now += ms) };
}

const sinkFailed = { code: 'sink_failed', retryable: true, message: 'Connection is closed.' } as const;

describe('OpsFailureLog', () => {
  it('counts every failure but logs a repeating one once a minute, with how many went unlogged', () => {
    const { failures, warnings, counted, advance } = setup();
    for (let i = 0; i < 61; i++) {
      failures.failed(sinkFailed);
      advance(1_000);
    }
    expect(counted).toHaveLength(61);
    expect(warnings.map((w) => w.obj)).toEqual([
      { ...sinkFailed, notLoggedSince: 0 },
      { ...sinkFailed, notLoggedSince: 59 },
    ]);
    expect(warnings[0]?.msg).toBe('ops snapshot not published');
  });

  it('keeps codes apart: a new kind of failure is logged at once', () => {
    const { failures, warnings, counted } = setup();
    failures.failed(sinkFailed);
    failures.failed({ code: 'too_large', retryable: false, bytes: 20_000 });
    failures.failed({ code: 'collect_failed', retryable: true, message: 'boom' });
    failures.failed(sinkFailed);
    expect(counted).toEqual(['sink_failed', 'too_large', 'collect_failed', 'sink_failed']);
    expect(warnings.map((w) => (w.obj as { code: string }).code)).toEqual(['sink_failed', 'too_large', 'collect_failed']);
  });
});
