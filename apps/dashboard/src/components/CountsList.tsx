/** Cumulative counts by key (refusals by reason, coverage by kind), largest first; `—` when there are none. */
export function CountsList({ counts, keyAttribute }: { counts: Readonly<Record<string, number>>; keyAttribute: `data-${string}` }) {
  const entries = Object.entries(counts).sort(([ka, a], [kb, b]) => b - a || ka.localeCompare(kb));
  if (entries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="counts">
      {entries.map(([key, value]) => (
        <li key={key} {...{ [keyAttribute]: key }} data-value={value}>
          {key} <b>{value}</b>
        </li>
      ))}
    </ul>
  );
}
