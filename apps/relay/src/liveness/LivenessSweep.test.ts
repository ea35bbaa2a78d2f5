import { describe, expect, it } from 'vitest';
import { ManualClock } from '@streamgate/protocol/testing';
import { LivenessSweep } from './LivenessSweep.js';

function target() {
  const t = { pings: 0, timedOut: 0 };
  return {
    state: t,
    handlers: { ping: () => void t.pings++, timedOut: () => void t.timedOut++ },
  };
}

describe('LivenessSweep', () => {
  it('pings every socket once per interval and keeps one that answers', () => {
    const clock = new ManualClock(0);
    const sweep = new LivenessSweep({ clock, intervalMs: 1000, slots: 4 });
    const a = target();
    const member = sweep.add(a.handlers);
    clock.advanceSync(1000);
    expect(a.state.pings).toBe(1);
    for (let round = 0; round < 5; round++) {
      member.heard();
      clock.advanceSync(1000);
    }
    expect(a.state.pings).toBe(6);
    expect(a.state.timedOut).toBe(0);
    sweep.close();
  });

  it('closes a socket silent for a whole interval after a ping, within two intervals of the last frame', () => {
    const clock = new ManualClock(0);
    let timeouts = 0;
    const sweep = new LivenessSweep({ clock, intervalMs: 1000, slots: 4, onTimeout: () => void timeouts++ });
    const quiet = target();
    const chatty = target();
    sweep.add(quiet.handlers);
    const chattyMember = sweep.add(chatty.handlers);
    // The first ping falls within the first interval; the silent socket is closed one interval later.
    clock.advanceSync(1000);
    expect(quiet.state.pings).toBe(1);
    expect(quiet.state.timedOut).toBe(0);
    chattyMember.heard();
    clock.advanceSync(1000);
    expect(quiet.state.timedOut).toBe(1);
    expect(timeouts).toBe(1);
    expect(chatty.state.timedOut).toBe(0);
    expect(sweep.size).toBe(1);
    // Never pinged again once closed.
    chattyMember.heard();
    clock.advanceSync(1000);
    expect(quiet.state.pings).toBe(1);
    sweep.close();
  });

  it('spreads sockets over the slots, with one timer for the whole relay', () => {
    const clock = new ManualClock(0);
    const sweep = new LivenessSweep({ clock, intervalMs: 1000, slots: 10 });
    const targets = Array.from({ length: 100 }, () => target());
    for (const t of targets) sweep.add(t.handlers);
    expect(clock.pending).toBe(1);
    clock.advanceSync(100);
    expect(targets.filter((t) => t.state.pings === 1)).toHaveLength(10);
    clock.advanceSync(900);
    expect(targets.every((t) => t.state.pings === 1)).toBe(true);
    expect(clock.pending).toBe(1);
    sweep.close();
    expect(clock.pending).toBe(0);
  });

  it('stops its timer when the last socket leaves and rearms for the next', () => {
    const clock = new ManualClock(0);
    const sweep = new LivenessSweep({ clock, intervalMs: 1000, slots: 2 });
    const member = sweep.add(target().handlers);
    sweep.remove(member);
    clock.advanceSync(1000);
    expect(clock.pending).toBe(0);
    const b = target();
    sweep.add(b.handlers);
    expect(clock.pending).toBe(1);
    clock.advanceSync(1000);
    expect(b.state.pings).toBe(1);
    sweep.close();
  });
});
