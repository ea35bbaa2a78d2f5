import { z } from 'zod';

const Join = z.object({ join: z.string().min(1) });

/** The stream a peer client asks to join, or null for anything else (ignored by the peers). */
export function parseJoin(text: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  const parsed = Join.safeParse(value);
  return parsed.success ? parsed.data.join : null;
}
