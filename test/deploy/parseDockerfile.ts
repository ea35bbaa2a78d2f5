export type Instruction = { keyword: string; args: string; line: number };
export type Stage = { image: string; name: string | null; instructions: Instruction[] };

/**
 * Splits a Dockerfile into build stages of instructions: enough to lint its shape statically
 * where no container engine is available. Joins `\` continuations, drops comments and parser
 * directives; does not expand ARG variables (a FROM that uses one is reported as such by callers).
 */
export function parseDockerfile(text: string): Stage[] {
  const instructions: Instruction[] = [];
  let pending = '';
  let startLine = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending === '') startLine = index + 1;
    if (line.endsWith('\\')) {
      pending += `${line.slice(0, -1)} `;
      return;
    }
    const full = (pending + line).trim();
    pending = '';
    const match = /^(\S+)\s*(.*)$/.exec(full);
    if (match?.[1] !== undefined) instructions.push({ keyword: match[1].toUpperCase(), args: match[2] ?? '', line: startLine });
  });
  const stages: Stage[] = [];
  for (const instruction of instructions) {
    if (instruction.keyword === 'FROM') {
      const words = instruction.args.split(/\s+/).filter((w) => !w.startsWith('--'));
      const asIndex = words.findIndex((w) => w.toUpperCase() === 'AS');
      stages.push({ image: words[0] ?? '', name: asIndex >= 0 ? (words[asIndex + 1] ?? null) : null, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push(instruction);
    }
  }
  return stages;
}
