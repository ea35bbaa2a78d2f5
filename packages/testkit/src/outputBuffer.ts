export type OutputStream = 'stdout' | 'stderr';

export interface OutputLine {
  /** 0-based position of the line in everything the process printed, evicted lines included. */
  readonly seq: number;
  readonly stream: OutputStream;
  readonly text: string;
}

/**
 * The last `capacity` lines a process printed. Bounded so a chatty process cannot grow a test's
 * memory; what falls off the front is counted (`total`) so error messages say what is missing.
 */
export class OutputBuffer {
  readonly #capacity: number;
  readonly #lines: OutputLine[] = [];
  #total = 0;

  constructor(capacity = 200) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError('capacity must be a positive integer');
    this.#capacity = capacity;
  }

  push(stream: OutputStream, text: string): OutputLine {
    const line: OutputLine = { seq: this.#total, stream, text };
    this.#total += 1;
    this.#lines.push(line);
    // Shift is O(n) but n ≤ 200, and only once the buffer is full.
    if (this.#lines.length > this.#capacity) this.#lines.shift();
    return line;
  }

  /** Lines printed so far, evicted ones included: a cursor for "lines after this point". */
  get total(): number {
    return this.#total;
  }

  /** The retained lines, oldest first. */
  snapshot(): readonly OutputLine[] {
    return this.#lines.slice();
  }

  /** The retained lines as text, stderr marked, ready to append to an error message. */
  format(): string {
    const shown = this.#lines.length;
    const header = shown === this.#total ? `--- output (${shown} lines) ---` : `--- output (last ${shown} of ${this.#total} lines) ---`;
    if (shown === 0) return '--- no output ---';
    const body = this.#lines.map((line) => (line.stream === 'stderr' ? `[stderr] ${line.text}` : line.text));
    return [header, ...body, '--- end of output ---'].join('\n');
  }
}
