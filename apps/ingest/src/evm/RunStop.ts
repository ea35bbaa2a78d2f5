import type { RunEnd } from '@streamgate/ingest-core';

/** Ends a run from deep inside processing (fenced, halted by policy, stopped). */
export class RunStop extends Error {
  override readonly name = 'RunStop';
  constructor(readonly end: RunEnd) {
    super(end.reason);
  }
}
