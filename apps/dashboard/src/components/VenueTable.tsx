import type { IngestVenue } from '@streamgate/ops';
import { CountsList } from './CountsList.js';
import { yesNo } from './Field.js';

/** Each market-data venue: `[data-testid="venue"][data-venue]`, its sessions with their symbols, coverage by kind. */
export function VenueTable({ venues }: { venues: readonly IngestVenue[] }) {
  if (venues.length === 0) return <p className="muted">no venues</p>;
  return (
    <table className="rows">
      <thead>
        <tr>
          <th>venue</th>
          <th>sessions (symbols each)</th>
          <th>wanted</th>
          <th>covered by kind</th>
        </tr>
      </thead>
      <tbody>
        {venues.map((v) => (
          <tr key={v.venue} data-testid="venue" data-venue={v.venue}>
            <td className="name">{v.venue}</td>
            <td data-field="sessions" data-count={v.sessions.length}>
              {v.sessions.length === 0 ? (
                <span className="muted">—</span>
              ) : (
                <ul className="counts">
                  {v.sessions.map((s) => (
                    <li
                      key={s.id}
                      data-testid="venue-session"
                      data-session={s.id}
                      data-symbols={s.symbols}
                      data-connected={yesNo(s.connected)}
                      className={s.connected ? undefined : 'problem'}
                    >
                      {s.id} <b>{s.symbols}</b>
                      {s.connected ? null : ' (disconnected)'}
                    </li>
                  ))}
                </ul>
              )}
            </td>
            <td data-field="wanted">{v.wanted}</td>
            <td data-field="coverage">
              <CountsList counts={v.coverage} keyAttribute="data-coverage-kind" />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
