import { useState, type FormEvent } from 'react';
import { api, ApiError } from './api.js';

/**
 * The key goes to POST /session once and is dropped: the service answers with an HttpOnly cookie,
 * and nothing here writes the key to any browser storage.
 */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent): Promise<void> => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await api('POST', '/session', { key });
      setKey('');
      onSignedIn();
    } catch (failure) {
      setError(failure instanceof ApiError ? failure.detail : 'The service did not answer.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in">
      <h1>mada</h1>
      <form onSubmit={(event) => void submit(event)}>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          name="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          required
          value={key}
          onChange={(event) => setKey(event.target.value)}
        />
        <button type="submit" disabled={busy || key === ''}>
          Sign in
        </button>
        {error === null ? null : (
          <p role="alert" className="error">
            {error}
          </p>
        )}
      </form>
    </main>
  );
}
