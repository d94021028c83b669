import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import type { RunListResponse, RunStatus } from '@mada/protocol';
import { RUN_STATUSES } from '@mada/protocol/browser';
import { api } from './api.js';
import { AppLink } from './links.js';
import { shortTime } from './time.js';

/** The first line of a prompt, cut short: the list shows which run is which, the run page the rest. */
const firstLine = (text: string): string => {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 120 ? `${line.slice(0, 119)}…` : line;
};

/** The caller's runs, newest first, asked again every 5 s. */
export function Runs() {
  const [status, setStatus] = useState<RunStatus | ''>('');
  const runs = useQuery({
    queryKey: ['runs', status],
    queryFn: () => api<RunListResponse>('GET', `/runs?limit=50${status === '' ? '' : `&status=${status}`}`),
    refetchInterval: 5000,
  });
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <label htmlFor="run-status" className="small">
        Status
      </label>
      <select id="run-status" value={status} onChange={(event) => setStatus(event.target.value as RunStatus | '')}>
        <option value="">All</option>
        {RUN_STATUSES.map((name) => (
          <option key={name} value={name}>
            {name}
          </option>
        ))}
      </select>
      {runs.error ? (
        <p role="alert" className="error">
          {runs.error.message}
        </p>
      ) : null}
      {runs.data && runs.data.runs.length === 0 ? <p>No run.</p> : null}
      <ul className="runs">
        {runs.data?.runs.map((run) => (
          <li key={run.id}>
            <AppLink to={`/runs/${run.id}`}>
              <span className={`status ${run.status}`}>{run.status}</span> <span className="prompt">{firstLine(run.prompt)}</span>
            </AppLink>
            <span className="small">
              {run.agent_type} · {shortTime(run.created_at)}
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
