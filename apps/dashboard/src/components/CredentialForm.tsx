import { useState } from 'react';

/**
 * Asks for the operator credential when the URL fragment carries none, or after the auth service
 * refused it. It stays in this tab's memory: nothing stores it, nothing logs it.
 */
export function CredentialForm({ refused, onCredential }: { refused: string | undefined; onCredential: (credential: string) => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      className="credential"
      data-testid="credential-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (value.trim() !== '') onCredential(value);
      }}
    >
      <h2>Operator credential</h2>
      <p className="muted">
        The auth service's <code>ops.token</code> mints the operations-stream token for it. It can also come in the URL fragment,
        <code>#credential=…</code>, which the browser never sends to any server.
      </p>
      {refused === undefined ? null : (
        <p className="problem" data-testid="credential-refused">
          {refused}
        </p>
      )}
      <input
        type="password"
        autoComplete="off"
        aria-label="operator credential"
        data-testid="credential-input"
        value={value}
        onChange={(event) => setValue(event.target.value)}
      />{' '}
      <button type="submit" data-testid="credential-submit">
        Open the dashboard
      </button>
    </form>
  );
}
