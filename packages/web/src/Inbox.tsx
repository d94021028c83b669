import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useId, useRef, useState } from 'react';
import type { ApprovalDecision, ApprovalResponse, RunResponse } from '@mada/protocol';
import { describeCall } from '@mada/protocol/browser';
import { api, ApiError } from './api.js';
import { PENDING_KEY, usePendingApprovals } from './approvals.js';
import { useNotificationPermission } from './notifications.js';
import { navigate } from './router.js';
import { timeLeft, useNow } from './time.js';

const DECISIONS: { decision: ApprovalDecision; label: string; className: string }[] = [
  { decision: 'approve', label: 'Approve', className: 'approve' },
  { decision: 'deny', label: 'Deny', className: 'deny' },
  { decision: 'approve_always', label: 'Always', className: 'quiet' },
];

/**
 * The call in a box of bounded height. A call can be made so that its start looks harmless and
 * the rest sits below the fold (hundreds of blank lines before `rm ...`, written by a model a
 * hostile file steered; runs of spaces hang at the end of a line here rather than wrap): when
 * the box cannot show all of it, the card says so above the answers, as the `mada` client does
 * in a terminal too short for the call.
 */
function CallText({ text }: { text: string }) {
  const box = useRef<HTMLPreElement>(null);
  const [hidden, setHidden] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (element === null) return;
    const measure = (): void => setHidden(element.scrollHeight > element.clientHeight + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, [text]);
  return (
    <>
      {/* Focusable: a box that scrolls must scroll from the keyboard too. */}
      <pre ref={box} className="call" tabIndex={0}>
        {text}
      </pre>
      {hidden ? (
        <p className="error" role="note">
          The call is longer than this box shows: scroll it to read all of it before you answer.
        </p>
      ) : null}
    </>
  );
}

function ApprovalCard({ approval, now, onRefused }: { approval: ApprovalResponse; now: number; onRefused: (detail: string) => void }) {
  const client = useQueryClient();
  const messageId = useId();
  const [message, setMessage] = useState('');
  // The working directory is the run's: it never changes, so it is asked once.
  const run = useQuery({
    queryKey: ['run', approval.run_id],
    queryFn: () => api<RunResponse>('GET', `/runs/${approval.run_id}`),
    staleTime: Infinity,
  });
  const decide = useMutation({
    mutationFn: (decision: ApprovalDecision) =>
      api<ApprovalResponse>('POST', `/approvals/${approval.id}`, { decision, ...(decision === 'deny' && message !== '' ? { message } : {}) }),
    onError: (error) => {
      // Answered elsewhere (the CLI, another tab) or expired: said above the list, since the card
      // leaves it as soon as the list is asked again.
      onRefused(error instanceof ApiError ? `${describeCall(approval)}: ${error.detail}` : 'The service did not answer.');
    },
    onSettled: () => client.invalidateQueries({ queryKey: PENDING_KEY }),
  });
  const titleId = `${messageId}-title`;

  return (
    <article className="card" aria-labelledby={titleId}>
      <h2 id={titleId} className="tool">
        {approval.tool}
      </h2>
      <CallText text={describeCall(approval)} />
      <dl>
        <dt>Reason</dt>
        <dd>{approval.reason}</dd>
        <dt>Working directory</dt>
        <dd className="path">{run.data?.working_dir ?? '…'}</dd>
        <dt>Time left</dt>
        <dd>{timeLeft(approval.expires_at, now)}</dd>
      </dl>
      <label htmlFor={messageId} className="small">
        Message with Deny (optional)
      </label>
      <input id={messageId} type="text" value={message} maxLength={2000} onChange={(event) => setMessage(event.target.value)} />
      <div className="actions">
        {DECISIONS.map(({ decision, label, className }) => (
          <button key={decision} type="button" className={className} disabled={decide.isPending} onClick={() => decide.mutate(decision)}>
            {label}
          </button>
        ))}
      </div>
      <p className="small">
        <a
          href={`/app/runs/${approval.run_id}`}
          onClick={(event) => {
            event.preventDefault();
            navigate(`/runs/${approval.run_id}`);
          }}
        >
          Open the run
        </a>
      </p>
    </article>
  );
}

/** The start page: every approval waiting for this user, across runs. */
export function Inbox() {
  const pending = usePendingApprovals();
  const now = useNow();
  const approvals = pending.data?.approvals ?? [];
  const [refused, setRefused] = useState<string | null>(null);
  const notifications = useNotificationPermission();
  return (
    <section aria-labelledby="inbox-title">
      <h1 id="inbox-title">Inbox</h1>
      {notifications.permission === 'default' ? (
        <p className="small">
          <button type="button" className="quiet" onClick={notifications.ask}>
            Turn on notifications
          </button>{' '}
          to hear of a new approval while the console is open in another tab.
        </p>
      ) : null}
      {pending.error ? (
        <p role="alert" className="error">
          {pending.error.message}
        </p>
      ) : null}
      {refused === null ? null : (
        <p role="alert" className="error">
          Not answered here: {refused}
        </p>
      )}
      {pending.data && approvals.length === 0 ? <p>No approval is waiting.</p> : null}
      <div aria-live="polite">
        {approvals.map((approval) => (
          <ApprovalCard key={approval.id} approval={approval} now={now} onRefused={setRefused} />
        ))}
      </div>
    </section>
  );
}
