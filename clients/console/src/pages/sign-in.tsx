/**
 * Asks for the admin token once per tab. It is checked against the API before it is kept,
 * so a wrong token is refused here rather than on the first page. The input has no name and
 * the form never submits natively, so the token cannot end up in a URL.
 */
import { useState } from 'preact/hooks';
import { AdminApi } from '../api';
import { ErrorNote } from '../components';
import { normaliseToken } from '../session';

export function SignIn({ reason, onSignedIn }: { reason: string | null; onSignedIn: (token: string) => void }) {
  const [input, setInput] = useState('');
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<Error | null>(null);

  const submit = async (event: Event) => {
    event.preventDefault();
    const token = normaliseToken(input);
    if (!token) {
      setError(new Error('Enter the admin token (ADMIN_TOKEN of the ingest service).'));
      return;
    }
    setChecking(true);
    setError(null);
    try {
      await new AdminApi({ token }).sources();
      setInput('');
      onSignedIn(token);
    } catch (thrown) {
      setError(thrown instanceof Error ? thrown : new Error(String(thrown)));
    } finally {
      setChecking(false);
    }
  };

  return (
    <main class="sign-in">
      <form method="post" onSubmit={submit} class="panel sign-in-form" aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Tributary console</h1>
        <p>Sign in with the admin token of this ingest service. It is kept in this tab only, until you sign out or close it.</p>
        {reason ? (
          <p class="state warn" role="alert">
            Signed out: {reason}
          </p>
        ) : null}
        <label for="admin-token">Admin token</label>
        <input
          id="admin-token"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={input}
          onInput={(event) => setInput(event.currentTarget.value)}
          autofocus
        />
        <button type="submit" disabled={checking}>
          {checking ? 'Checking…' : 'Sign in'}
        </button>
        {error ? <ErrorNote error={error} /> : null}
      </form>
    </main>
  );
}
