import type { IngestChainStream } from '@streamgate/ops';

/** Each upstream chain stream: `[data-testid="chain-stream"][data-stream]`, a `[data-field]` per figure. */
export function ChainStreamTable({ chains }: { chains: readonly IngestChainStream[] }) {
  if (chains.length === 0) return <p className="muted">no chain streams</p>;
  return (
    <table className="rows">
      <thead>
        <tr>
          <th>stream</th>
          <th>chain</th>
          <th>state</th>
          <th>provider</th>
          <th>preferred</th>
          <th>on preferred</th>
          <th>head</th>
          <th>last written</th>
          <th>failovers</th>
          <th>gaps</th>
          <th>reorgs</th>
        </tr>
      </thead>
      <tbody>
        {chains.map((c) => (
          <tr key={c.stream} data-testid="chain-stream" data-stream={c.stream} data-stream-state={c.state}>
            <td className="name">{c.stream}</td>
            <td data-field="chain">{c.chain}</td>
            <td data-field="state" className={`state-${c.state}`}>
              {c.state}
            </td>
            <td data-field="provider">{c.provider ?? '—'}</td>
            <td data-field="preferred">{c.preferredProvider ?? '—'}</td>
            <td data-field="onPreferred" className={c.onPreferred ? undefined : 'state-switching'}>
              {c.onPreferred ? 'yes' : 'no'}
            </td>
            <td data-field="head">{c.head ?? '—'}</td>
            <td data-field="lastWritten">{c.lastWritten ?? '—'}</td>
            <td data-field="failovers">{c.failovers}</td>
            <td data-field="gaps">{c.gaps}</td>
            <td data-field="reorgs">{c.reorgs}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
