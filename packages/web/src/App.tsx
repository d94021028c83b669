import { useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useState } from 'react';
import type { MeResponse } from '@mada/protocol';
import { api, ApiError, whenSignedOut } from './api.js';
import { useLiveApprovals } from './approvals.js';
import { Inbox } from './Inbox.js';
import { AppLink as Link } from './links.js';
import { Runs } from './Runs.js';
import { usePath } from './router.js';
import { SignIn } from './SignIn.js';

/** `mada` or `(3) mada`: the pending approvals show in the tab's title, whatever the view. */
function useTitleCount(count: number): void {
  useEffect(() => {
    document.title = count > 0 ? `(${count}) mada` : 'mada';
  }, [count]);
}

// The first view (the Inbox) loads alone; the heavier views (markdown, the diff viewer, the
// virtual list) come as their own chunks when first opened.
const RunPage = lazy(() => import('./RunPage.js').then((module) => ({ default: module.RunPage })));
const Conversations = lazy(() => import('./Conversations.js').then((module) => ({ default: module.Conversations })));
const Conversation = lazy(() => import('./Conversation.js').then((module) => ({ default: module.Conversation })));
const Account = lazy(() => import('./Account.js').then((module) => ({ default: module.Account })));

function Routed({ path }: { path: string }) {
  const run = /^\/runs\/([^/]+)$/.exec(path);
  if (run) return <RunPage runId={decodeURIComponent(run[1]!)} />;
  if (path === '/runs') return <Runs />;
  const conversation = /^\/conversations\/([^/]+)$/.exec(path);
  if (conversation) return <Conversation conversationId={decodeURIComponent(conversation[1]!)} />;
  if (path === '/conversations') return <Conversations />;
  if (path === '/account') return <Account />;
  return <Inbox />;
}

function View({ path }: { path: string }) {
  return (
    <Suspense fallback={<p aria-busy="true">Loading…</p>}>
      <Routed path={path} />
    </Suspense>
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
          <Link to="/conversations" current={path.startsWith('/conversations')}>
            Conversations
          </Link>
          <Link to="/account" current={path === '/account'}>
            Account
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
