import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { lazy, Suspense, useEffect, useRef } from 'react';
import type { RunResponse } from '@mada/protocol';
import { exactText } from '@mada/protocol/browser';
import { api, ApiError } from './api.js';
import { EventList, useRunEvents } from './events.js';
import { Markdown } from './Markdown.js';

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

// The diff viewer is the heaviest part of the page, and only an ended run has changes.
const Changes = lazy(() => import('./Changes.js').then((module) => ({ default: module.Changes })));

/** One run: its state, usage and events as they arrive, and Cancel run while it goes on. */
export function RunPage({ runId }: { runId: string }) {
  const client = useQueryClient();
  const run = useQuery({
    queryKey: ['run', runId],
    queryFn: () => api<RunResponse>('GET', `/runs/${encodeURIComponent(runId)}`),
    // Its events say when it changes; the poll only catches what they do not (a cancel elsewhere).
    refetchInterval: (query) => (query.state.data && ENDED.has(query.state.data.status) ? false : 5000),
  });
  // Usage and status follow the events, asked again at most once a second while they stream (a
  // replay of thousands of events must not become thousands of requests), and once at the end.
  const asked = useRef(0);
  const { events, ended } = useRunEvents(runId, () => {
    if (Date.now() - asked.current < 1000) return;
    asked.current = Date.now();
    void client.invalidateQueries({ queryKey: ['run', runId] });
  });
  useEffect(() => {
    if (ended) void client.invalidateQueries({ queryKey: ['run', runId] });
  }, [ended, client, runId]);
  const cancel = useMutation({
    mutationFn: () => api<RunResponse>('POST', `/runs/${encodeURIComponent(runId)}/cancel`),
    onSettled: () => client.invalidateQueries({ queryKey: ['run', runId] }),
  });
  if (run.error) {
    return (
      <p role="alert" className="error">
        {run.error instanceof ApiError && run.error.status === 404 ? 'No such run.' : run.error.message}
      </p>
    );
  }
  const data = run.data;
  return (
    <section aria-labelledby="run-title">
      <h1 id="run-title">Run</h1>
      {data ? (
        <>
          <p>
            <span className={`status ${data.status}`}>{data.status}</span> · {data.agent_type} · {data.mode}
          </p>
          <pre className="prompt-text">{exactText(data.prompt)}</pre>
          <dl>
            <dt>Working directory</dt>
            <dd className="path">{data.working_dir}</dd>
            <dt>Usage</dt>
            <dd>
              {data.usage.model_calls} model calls, {data.usage.tool_calls} tool calls, {data.usage.input_tokens} tokens in,{' '}
              {data.usage.output_tokens} out
            </dd>
          </dl>
          {ENDED.has(data.status) ? null : (
            <button type="button" className="deny" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
              Cancel run
            </button>
          )}
          {cancel.error ? (
            <p role="alert" className="error">
              {cancel.error.message}
            </p>
          ) : null}
        </>
      ) : (
        <p aria-busy="true">Loading…</p>
      )}
      <h2>Events</h2>
      <EventList events={events} label="Events of the run" />
      {data?.response ? (
        <>
          <h2>Answer</h2>
          <Markdown text={data.response} />
        </>
      ) : null}
      {data?.error ? (
        <p role="alert" className="error">
          {exactText(data.error)}
        </p>
      ) : null}
      {data && ENDED.has(data.status) ? (
        <Suspense fallback={<p aria-busy="true">Loading the changes…</p>}>
          <Changes runId={runId} />
        </Suspense>
      ) : null}
    </section>
  );
}
