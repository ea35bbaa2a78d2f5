import { describe, expect, it } from 'vitest';
import { parseFleetCommand } from './parseFleetCommand.js';

describe('parseFleetCommand', () => {
  it.each([
    ['cut primary', { op: 'cut', provider: 'primary' }],
    ['  CUT   secondary  ws ', { op: 'cut', provider: 'secondary', only: 'ws' }],
    ['restore primary http', { op: 'restore', provider: 'primary', only: 'http' }],
    ['drain relay-0', { op: 'drain', relay: 'relay-0', replace: false }],
    ['drain 1 replace', { op: 'drain', relay: '1', replace: true }],
    ['kill-primary', { op: 'kill-primary' }],
    ['kill-primary evm:anvil:heads', { op: 'kill-primary', stream: 'evm:anvil:heads' }],
    ['restart-nodes', { op: 'restart-nodes' }],
    ['status', { op: 'status' }],
    ['help', { op: 'help' }],
    ['quit', { op: 'quit' }],
    ['exit', { op: 'quit' }],
    ['', { op: 'nothing' }],
  ])('%j', (line, command) => {
    expect(parseFleetCommand(line)).toEqual({ ok: true, command });
  });

  it.each([
    ['cut', /usage: cut <provider>/],
    ['cut primary tcp', /usage: cut <provider> \[ws\|http\]/],
    ['drain', /usage: drain <relay>/],
    ['drain relay-0 now', /usage: drain <relay> \[replace\]/],
    ['help me', /help takes no arguments/],
    ['kill-primary a b', /usage: kill-primary \[stream\]/],
    ['restart-nodes now', /restart-nodes takes no arguments/],
  ])('refuses %j with its usage', (line, message) => {
    const parsed = parseFleetCommand(line);
    expect(parsed).toMatchObject({ ok: false, error: { code: 'bad_arguments', retryable: false } });
    if (!parsed.ok) expect(parsed.error.message).toMatch(message);
  });

  it('names an unknown command without echoing all of it', () => {
    const parsed = parseFleetCommand(`${'x'.repeat(500)} y`);
    expect(parsed).toMatchObject({ ok: false, error: { code: 'unknown_command' } });
    if (!parsed.ok) expect(parsed.error.message.length).toBeLessThan(120);
  });
});
