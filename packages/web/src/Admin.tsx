import { useInfiniteQuery, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useId, useState, type FormEvent } from 'react';
import type {
  AuditListResponse,
  AuditVerifyResponse,
  CreatedKeyResponse,
  CreateKeyRequest,
  CreateUserRequest,
  QuotaChanges,
  Quotas,
  UpdateUserRequest,
  UserListResponse,
  UserResponse,
  UserRole,
} from '@mada/protocol';
import { AUDIT_ACTIONS, exactText } from '@mada/protocol/browser';
import { QUOTA_LABELS } from './Account.js';
import { api, errorText } from './api.js';
import { ErrorLine } from './feedback.js';
import { shortTime } from './time.js';

/* For admins: the users (create, disable, workspace, quotas, a first key) and the audit log. */

const USERS_KEY = ['users'] as const;
const QUOTA_NAMES = Object.keys(QUOTA_LABELS) as (keyof Quotas)[];

/** One path a line, blank lines dropped. */
const pathsOf = (text: string): string[] =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '');

/** A quota field: empty follows the service's default (`null`), a number sets it (0: no limit). */
const quotaOf = (text: string): number | null => (text.trim() === '' ? null : Number(text));

type QuotaTexts = Record<keyof Quotas, string>;
const NO_QUOTAS: QuotaTexts = { max_concurrent_runs: '', max_runs_per_day: '', max_tokens_per_day: '' };

const quotaChanges = (texts: QuotaTexts): QuotaChanges =>
  Object.fromEntries(QUOTA_NAMES.map((name) => [name, quotaOf(texts[name])])) as QuotaChanges;

/** The fields a user is made or changed with: role, workspace paths, quotas. */
function UserFields({
  prefix,
  role,
  setRole,
  paths,
  setPaths,
  quotas,
  setQuotas,
}: {
  prefix: string;
  role: UserRole;
  setRole: (role: UserRole) => void;
  paths: string;
  setPaths: (paths: string) => void;
  quotas: QuotaTexts;
  setQuotas: (quotas: QuotaTexts) => void;
}) {
  return (
    <>
      <label htmlFor={`${prefix}-role`}>Role</label>
      <select id={`${prefix}-role`} value={role} onChange={(event) => setRole(event.target.value as UserRole)}>
        <option value="member">member</option>
        <option value="admin">admin</option>
      </select>
      <label htmlFor={`${prefix}-paths`}>Workspace paths (one a line; none: the default)</label>
      <textarea id={`${prefix}-paths`} rows={2} spellCheck={false} value={paths} onChange={(event) => setPaths(event.target.value)} />
      <fieldset>
        <legend>Quotas (0: no limit; empty: the service default)</legend>
        {QUOTA_NAMES.map((name) => (
          <span key={name} className="quota">
            <label htmlFor={`${prefix}-${name}`}>{QUOTA_LABELS[name]}</label>
            <input
              id={`${prefix}-${name}`}
              type="number"
              min={0}
              value={quotas[name]}
              onChange={(event) => setQuotas({ ...quotas, [name]: event.target.value })}
            />
          </span>
        ))}
      </fieldset>
    </>
  );
}

function NewUser() {
  const id = useId();
  const client = useQueryClient();
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<UserRole>('member');
  const [paths, setPaths] = useState('');
  const [quotas, setQuotas] = useState<QuotaTexts>(NO_QUOTAS);
  const create = useMutation({
    mutationFn: (body: CreateUserRequest) => api<UserResponse>('POST', '/users', body),
    onSuccess: () => {
      setUserId('');
      setPaths('');
      setQuotas(NO_QUOTAS);
    },
    onSettled: () => client.invalidateQueries({ queryKey: USERS_KEY }),
  });
  const submit = (event: FormEvent): void => {
    event.preventDefault();
    const workspace = pathsOf(paths);
    create.mutate({ id: userId.trim(), role, ...(workspace.length > 0 ? { workspace_paths: workspace } : {}), quotas: quotaChanges(quotas) });
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>New user</h3>
      <label htmlFor={`${id}-id`}>User id</label>
      <input id={`${id}-id`} type="text" required maxLength={64} spellCheck={false} value={userId} onChange={(event) => setUserId(event.target.value)} />
      <UserFields prefix={id} role={role} setRole={setRole} paths={paths} setPaths={setPaths} quotas={quotas} setQuotas={setQuotas} />
      <div className="row">
        <button type="submit" className="approve" disabled={create.isPending || userId.trim() === ''}>
          Create user
        </button>
      </div>
      <ErrorLine error={create.error} />
    </form>
  );
}

/** One user: what applies to them, and for a stored user the changes an admin can make. */
function UserRow({ user }: { user: UserResponse }) {
  const id = useId();
  const client = useQueryClient();
  const [role, setRole] = useState<UserRole>(user.role);
  const [paths, setPaths] = useState(user.workspace.paths.join('\n'));
  const [quotas, setQuotas] = useState<QuotaTexts>(NO_QUOTAS);
  const [key, setKey] = useState<CreatedKeyResponse | null>(null);
  const path = `/users/${encodeURIComponent(user.id)}`;
  const update = useMutation({
    mutationFn: (body: UpdateUserRequest) => api<UserResponse>('PATCH', path, body),
    onSettled: () => client.invalidateQueries({ queryKey: USERS_KEY }),
  });
  const newKey = useMutation({
    mutationFn: (body: CreateKeyRequest) => api<CreatedKeyResponse>('POST', `${path}/keys`, body),
    onSuccess: setKey,
  });
  const save = (event: FormEvent): void => {
    event.preventDefault();
    // Only the quotas typed in change: an empty field leaves the quota as it is.
    const typed = Object.fromEntries(QUOTA_NAMES.filter((name) => quotas[name].trim() !== '').map((name) => [name, Number(quotas[name])]));
    update.mutate({ role, workspace_paths: pathsOf(paths), quotas: typed });
  };
  const error = update.error ?? newKey.error;
  return (
    <li className="card">
      <p>
        <strong>{exactText(user.id)}</strong> · {user.role}
        {user.disabled ? ' · disabled' : ''}
        {user.source === 'config' ? ' · configured in API_KEYS' : ''}
      </p>
      <dl>
        <dt>Workspace</dt>
        <dd className="path">{user.workspace.paths.map(exactText).join('\n') || 'none'}</dd>
        {QUOTA_NAMES.map((name) => (
          <div key={name} className="contents">
            <dt>{QUOTA_LABELS[name]}</dt>
            <dd>{user.quotas[name] === 0 ? 'no limit' : user.quotas[name]}</dd>
          </div>
        ))}
      </dl>
      {user.source === 'stored' ? (
        <>
          <div className="row">
            <button
              type="button"
              className={user.disabled ? 'approve' : 'deny'}
              aria-label={`${user.disabled ? 'Enable' : 'Disable'} ${user.id}`}
              disabled={update.isPending}
              onClick={() => update.mutate({ disabled: !user.disabled })}
            >
              {user.disabled ? 'Enable' : 'Disable'}
            </button>
            <button type="button" className="quiet" aria-label={`New key for ${user.id}`} disabled={newKey.isPending} onClick={() => newKey.mutate({ name: 'console' })}>
              New key
            </button>
          </div>
          {key ? (
            <div role="status">
              <p>The new key of {exactText(user.id)}, shown this once:</p>
              <pre className="call">{key.key}</pre>
            </div>
          ) : null}
          <details>
            <summary>Change {exactText(user.id)}</summary>
            <form onSubmit={save}>
              <UserFields prefix={id} role={role} setRole={setRole} paths={paths} setPaths={setPaths} quotas={quotas} setQuotas={setQuotas} />
              <div className="row">
                <button type="submit" className="approve" disabled={update.isPending}>
                  Save
                </button>
              </div>
            </form>
          </details>
        </>
      ) : null}
      {error ? (
        <p role="alert" className="error">
          {errorText(error)}
        </p>
      ) : null}
    </li>
  );
}

function Users() {
  const users = useQuery({ queryKey: USERS_KEY, queryFn: () => api<UserListResponse>('GET', '/users') });
  return (
    <section aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      <NewUser />
      <ErrorLine error={users.error} />
      <ul className="plain" aria-label="Users">
        {users.data?.users.map((user) => (
          <UserRow key={user.id} user={user} />
        ))}
      </ul>
    </section>
  );
}

/** The audit log, oldest first, a page at a time, filtered by actor or action; and its check. */
function Audit() {
  const id = useId();
  const [actor, setActor] = useState('');
  const [action, setAction] = useState('');
  const filter = `${actor.trim() === '' ? '' : `&actor=${encodeURIComponent(actor.trim())}`}${action === '' ? '' : `&action=${action}`}`;
  const entries = useInfiniteQuery({
    queryKey: ['audit', filter],
    queryFn: ({ pageParam }) => api<AuditListResponse>('GET', `/audit?limit=100&after=${pageParam}${filter}`),
    initialPageParam: 0,
    getNextPageParam: (page) => page.next_after ?? undefined,
  });
  const verify = useMutation({ mutationFn: () => api<AuditVerifyResponse>('GET', '/audit/verify') });
  const shown = entries.data?.pages.flatMap((page) => page.entries) ?? [];
  return (
    <section aria-labelledby="audit-title">
      <h2 id="audit-title">Audit log</h2>
      <div className="row">
        <button type="button" disabled={verify.isPending} onClick={() => verify.mutate()}>
          Verify the chain
        </button>
      </div>
      {verify.data ? (
        <p role="status" className={verify.data.ok ? '' : 'error'}>
          {verify.data.ok
            ? `The chain holds: ${verify.data.entries} entries checked.`
            : `The chain is broken at entry ${verify.data.first_bad_seq ?? '?'} (${verify.data.entries} entries read): an entry was changed or removed.`}
        </p>
      ) : null}
      <ErrorLine error={verify.error} />
      <label htmlFor={`${id}-actor`}>Actor</label>
      <input id={`${id}-actor`} type="text" maxLength={64} value={actor} onChange={(event) => setActor(event.target.value)} />
      <label htmlFor={`${id}-action`}>Action</label>
      <select id={`${id}-action`} value={action} onChange={(event) => setAction(event.target.value)}>
        <option value="">All</option>
        {AUDIT_ACTIONS.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      <ErrorLine error={entries.error} />
      <ol className="plain audit" aria-label="Audit entries">
        {shown.map((entry) => (
          <li key={entry.seq}>
            <p>
              <strong>#{entry.seq}</strong> {entry.action} by {exactText(entry.actor)}
              {entry.target ? ` on ${exactText(entry.target)}` : ''} <span className="small">{shortTime(entry.at)}</span>
            </p>
            <pre className="call">{exactText(JSON.stringify(entry.detail))}</pre>
          </li>
        ))}
      </ol>
      {entries.hasNextPage ? (
        <button type="button" disabled={entries.isFetchingNextPage} onClick={() => void entries.fetchNextPage()}>
          Newer entries
        </button>
      ) : null}
    </section>
  );
}

export function Admin() {
  return (
    <>
      <Users />
      <Audit />
    </>
  );
}
