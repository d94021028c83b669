import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Fragment, lazy, Suspense, useId, useState, type FormEvent } from 'react';
import type { CreatedKeyResponse, CreateKeyRequest, KeyListResponse, KeyResponse, MeResponse, Quotas, Usage } from '@mada/protocol';
import { exactText } from '@mada/protocol/browser';
import { api, ApiError } from './api.js';
import { ErrorLine, ShownOnce } from './feedback.js';
import { shortTime } from './time.js';
import { Webhooks } from './Webhooks.js';

// Only admins see these, so only admins load them.
const Admin = lazy(() => import('./Admin.js').then((module) => ({ default: module.Admin })));

const KEYS_KEY = ['me', 'keys'] as const;

/** `12 of 100`, or `12 (no limit)` for a quota of 0. */
export const ofLimit = (used: number, limit: number): string => (limit === 0 ? `${used} (no limit)` : `${used} of ${limit}`);

export const QUOTA_LABELS: Record<keyof Quotas, string> = {
  max_concurrent_runs: 'Runs at once',
  max_runs_per_day: 'Runs a day',
  max_tokens_per_day: 'Tokens a day',
};

function keyState(key: KeyResponse, now: number): string {
  if (key.revoked_at) return `revoked ${shortTime(key.revoked_at)}`;
  if (key.expires_at && Date.parse(key.expires_at) <= now) return `expired ${shortTime(key.expires_at)}`;
  return key.expires_at ? `expires ${shortTime(key.expires_at)}` : 'no expiry';
}

/** The caller's keys: a new one is shown here once, and never again. */
function Keys() {
  const id = useId();
  const client = useQueryClient();
  const keys = useQuery({ queryKey: KEYS_KEY, queryFn: () => api<KeyListResponse>('GET', '/me/keys'), retry: false });
  const [name, setName] = useState('');
  const [days, setDays] = useState('');
  const [created, setCreated] = useState<CreatedKeyResponse | null>(null);
  const create = useMutation({
    mutationFn: (body: CreateKeyRequest) => api<CreatedKeyResponse>('POST', '/me/keys', body),
    onSuccess: (key) => {
      setCreated(key);
      setName('');
      setDays('');
    },
    onSettled: () => client.invalidateQueries({ queryKey: KEYS_KEY }),
  });
  const revoke = useMutation({
    mutationFn: (keyId: string) => api<undefined>('DELETE', `/me/keys/${encodeURIComponent(keyId)}`),
    onSettled: () => client.invalidateQueries({ queryKey: KEYS_KEY }),
  });
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    create.mutate({ name: name.trim(), ...(days === '' ? {} : { expires_in_days: Number(days) }) });
  };

  if (keys.error instanceof ApiError && keys.error.status === 409) {
    return (
      <section aria-labelledby={`${id}-title`}>
        <h2 id={`${id}-title`}>Keys</h2>
        <p>{keys.error.detail}: the console needs no sign-in here.</p>
      </section>
    );
  }
  const now = Date.now();
  return (
    <section aria-labelledby={`${id}-title`}>
      <h2 id={`${id}-title`}>Keys</h2>
      <ErrorLine error={keys.error} />
      <ul className="runs" aria-label="My keys">
        {keys.data?.keys.map((key) => (
          <li key={key.id}>
            <span>
              <strong>{exactText(key.name)}</strong> <code>{key.prefix}…</code>
            </span>
            <span className="small">
              created {shortTime(key.created_at)} · {keyState(key, now)} · {key.last_used_at ? `last used ${shortTime(key.last_used_at)}` : 'never used'}
            </span>
            {key.revoked_at ? null : (
              <button type="button" className="deny" aria-label={`Revoke ${exactText(key.name)}`} disabled={revoke.isPending} onClick={() => revoke.mutate(key.id)}>
                Revoke
              </button>
            )}
          </li>
        ))}
      </ul>
      <ErrorLine error={revoke.error} />
      {created ? (
        <ShownOnce label="New key" value={created.key} onDone={() => setCreated(null)}>
          The new key <strong>{exactText(created.name)}</strong>. Copy it now: it is shown this once, and the service keeps only its digest.
        </ShownOnce>
      ) : null}
      <form className="card" onSubmit={submit}>
        <label htmlFor={`${id}-name`}>Key name</label>
        <input id={`${id}-name`} type="text" required maxLength={100} value={name} onChange={(event) => setName(event.target.value)} />
        <label htmlFor={`${id}-days`}>Expires in days (optional)</label>
        <input id={`${id}-days`} type="number" min={1} max={3650} value={days} onChange={(event) => setDays(event.target.value)} />
        <div className="row">
          <button type="submit" className="approve" disabled={create.isPending || name.trim() === ''}>
            Create key
          </button>
        </div>
        <ErrorLine error={create.error} />
      </form>
    </section>
  );
}

/** Today's runs and tokens per model; nothing before the day's first run. */
export function UsageByModel({ usage }: { usage: Usage }) {
  if (usage.by_model.length === 0) return null;
  return (
    <>
      <h3>By model</h3>
      <dl aria-label="Today by model">
        {usage.by_model.map((used) => (
          <Fragment key={used.model ?? ''}>
            <dt>{used.model === null ? 'Before models were counted' : exactText(used.model)}</dt>
            <dd>
              {used.runs} runs, {used.tokens} tokens
            </dd>
          </Fragment>
        ))}
      </dl>
    </>
  );
}

/** Who I am, my workspace, my quotas and what I used of them today, my keys; for admins, the rest. */
export function Account() {
  const me = useQuery({ queryKey: ['me'], queryFn: () => api<MeResponse>('GET', '/me'), refetchInterval: 10_000 });
  return (
    <section aria-labelledby="account-title">
      <h1 id="account-title">Account</h1>
      <ErrorLine error={me.error} />
      {me.data ? (
        <>
          <dl>
            <dt>User</dt>
            <dd>
              {me.data.id} ({me.data.role})
            </dd>
            <dt>Workspace</dt>
            <dd className="path">{me.data.workspace.paths.map(exactText).join('\n') || 'none'}</dd>
          </dl>
          <h2>Today (UTC)</h2>
          <dl>
            <dt>Running now</dt>
            <dd>{ofLimit(me.data.usage.running, me.data.quotas.max_concurrent_runs)}</dd>
            <dt>{QUOTA_LABELS.max_runs_per_day}</dt>
            <dd>{ofLimit(me.data.usage.runs_today, me.data.quotas.max_runs_per_day)}</dd>
            <dt>{QUOTA_LABELS.max_tokens_per_day}</dt>
            <dd>{ofLimit(me.data.usage.tokens_today, me.data.quotas.max_tokens_per_day)}</dd>
          </dl>
          <UsageByModel usage={me.data.usage} />
        </>
      ) : null}
      <Keys />
      <Webhooks />
      {me.data?.role === 'admin' ? (
        <Suspense fallback={<p aria-busy="true">Loading…</p>}>
          <Admin />
        </Suspense>
      ) : null}
    </section>
  );
}
