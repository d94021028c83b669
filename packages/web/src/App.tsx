import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import type { MeResponse } from '@mada/protocol';
import { api, ApiError, whenSignedOut } from './api.js';
import { useLiveApprovals } from './approvals.js';
import { Inbox } from './Inbox.js';
import { RunPage } from './RunPage.js';
import { Runs } from './Runs.js';
import { navigate, usePath } from './router.js';
import { SignIn } from './SignIn.js';

/** `mada` or `(3) mada`: the pending approvals show in the tab's title, whatever the view. */
function useTitleCount(count: number): void {
  useEffect(() => {
    document.title = count > 0 ? `(${count}) mada` : 'mada';
  }, [count]);
}

function View({ path }: { path: string }) {
  const run = /^\/runs\/([^/]+)$/.exec(path);
  if (run) return <RunPage runId={decodeURIComponent(run[1]!)} />;
  if (path === '/runs') return <Runs />;
  return <Inbox />;
}

function Link({ to, current, children }: { to: string; current: boolean; children: React.ReactNode }) {
  return (
    <a
      href={`/app${to}`}
      aria-current={current ? 'page' : undefined}
      onClick={(event) => {
        event.preventDefault();
        navigate(to);
      }}
    >
      {children}
    </a>
  );
}

function Console({ me, onSignOut }: { me: MeResponse; onSignOut: () => void }) {
  const path = usePath();
  const count = useLiveApprovals()?.approvals.length ?? 0;
  useTitleCount(count);
  return (
    <>
      <header className="bar">
        <span className="brand">mada</span>
        <nav aria-label="Views">
          <Link to="/" current={path === '/'}>
            Inbox{count > 0 ? ` (${count})` : ''}
          </Link>
          <Link to="/runs" current={path.startsWith('/runs')}>
            Runs
          </Link>
        </nav>
        <span className="who">{me.id}</span>
        {me.id === 'local' ? null : (
          <button type="button" className="quiet" onClick={onSignOut}>
            Sign out
          </button>
        )}
      </header>
      <main>
        <View path={path} />
      </main>
    </>
  );
}

export function App() {
  const client = useQueryClient();
  const [signedOut, setSignedOut] = useState(false);
  useEffect(() => whenSignedOut(() => setSignedOut(true)), []);
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<MeResponse>('GET', '/me'), enabled: !signedOut, retry: false });

  const signedIn = (): void => {
    setSignedOut(false);
    // Everything asked while signed out was refused: ask again as the user now signed in.
    client.clear();
  };
  const signOut = async (): Promise<void> => {
    try {
      await api('DELETE', '/session');
    } catch {
      // Signed out here either way: an ended session has nothing left to end.
    }
    client.clear();
    setSignedOut(true);
  };

  if (signedOut || (me.error instanceof ApiError && me.error.status === 401)) return <SignIn onSignedIn={signedIn} />;
  if (me.error) {
    return (
      <main>
        <p role="alert">The service did not answer: {me.error.message}</p>
      </main>
    );
  }
  if (!me.data) return <main aria-busy="true">Loading…</main>;
  return <Console me={me.data} onSignOut={() => void signOut()} />;
}
