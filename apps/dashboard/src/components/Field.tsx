import type { ReactNode } from 'react';

/** One figure of a card: `[data-field="<name>"]` holds exactly the value, so tests read it as text. */
export function Field({ name, label, children }: { name: string; label: string; children: ReactNode }) {
  return (
    <div className="field">
      <dt>{label}</dt>
      <dd data-field={name}>{children}</dd>
    </div>
  );
}

/** A rate with at most one decimal, as plain digits (no grouping) so that `Number(text)` reads it. */
export function rate(value: number): string {
  return String(Math.round(value * 10) / 10);
}

export function yesNo(value: boolean): string {
  return value ? 'yes' : 'no';
}
