import type { ChildProcess } from 'node:child_process';

// Children still running when the test process exits (a crashed worker, a test that forgot to
// stop what it started) would otherwise outlive the run and hold ports and CPU. An `exit`
// handler can only do synchronous work, so it sends SIGKILL: there is no time for a graceful stop.
const live = new Set<ChildProcess>();
let hooked = false;

function killAll(): void {
  for (const child of live) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}

export function trackChild(child: ChildProcess): void {
  live.add(child);
  if (!hooked) {
    hooked = true;
    process.once('exit', killAll);
  }
}

export function untrackChild(child: ChildProcess): void {
  live.delete(child);
}
