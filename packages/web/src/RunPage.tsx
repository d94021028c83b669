import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import type { RunEvent, RunResponse } from '@mada/protocol';
import { describeCall } from '@mada/protocol/browser';
import { api, ApiError } from './api.js';

const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

interface Numbered {
  id: number;
  event: RunEvent;
}

/**
 * A run's events from GET /runs/{id}/events: the stored ones, then live ones, one code path for
 * both. EventSource sends Last-Event-ID when it reconnects, and events are kept by id, so a
 * dropped connection shows each event once.
 */
function useRunEvents(runId: string, onEvent: () => void): { events: Numbered[]; ended: boolean } {
  const [events, setEvents] = useState<Numbered[]>([]);
  const [ended, setEnded] = useState(false);
  // A new callback each render must not reopen the stream: the stream calls the latest one.
  const latest = useRef(onEvent);
  latest.current = onEvent;
  useEffect(() => {
    setEvents([]);
    setEnded(false);
    const source = new EventSource(`/runs/${encodeURIComponent(runId)}/events`);
    source.onmessage = (message: MessageEvent<string>) => {
      const id = Number(message.lastEventId);
      const event = JSON.parse(message.data) as RunEvent;
      setEvents((seen) => (seen.length > 0 && seen[seen.length - 1]!.id >= id ? seen : [...seen, { id, event }]));
      latest.current();
      // The service closes the stream after the last event; EventSource would open it again.
      if (event.event === 'done' || event.event === 'error') {
        source.close();
        setEnded(true);
      }
    };
    return () => source.close();
  }, [runId]);
  return { events, ended };
}

function EventLine({ event }: { event: RunEvent }) {
  switch (event.event) {
    case 'tool_start':
      return (
        <details>
          <summary>
            Tool call: <code>{describeCall(event)}</code>
          </summary>
          <pre className="call">{JSON.stringify(event.args, null, 2)}</pre>
        </details>
      );
    case 'tool_done':
      return (
        <details>
          <summary>Tool result: {event.tool}</summary>
          <pre className="call">{event.result_summary}</pre>
        </details>
      );
    case 'approval_requested':
      return (
        <p>
          Approval asked: <code>{describeCall(event)}</code> ({event.reason})
        </p>
      );
    case 'approval_resolved':
      return <p>Approval answered: {event.decision}</p>;
    case 'thinking':
      return <p className="small">{event.message}</p>;
    case 'response':
      return <p className="answer">{event.text}</p>;
    case 'chunk':
      return <p className="answer">{event.data}</p>;
    case 'error':
      return (
        <p role="alert" className="error">
          {event.error_message}
        </p>
      );
    case 'done':
      return <p className="small">Done.</p>;
    default:
      return null;
  }
}

/** One run: its state, usage and events as they arrive, and Cancel run while it goes on. */
export function RunPage({ runId }: { runId: string }) {
  const client = useQueryClient();
  const run = useQuery({
    queryKey: ['run', runId],
    queryFn: () => api<RunResponse>('GET', `/runs/${encodeURIComponent(runId)}`),
    // Its events say when it changes; the poll only catches what they do not (a cancel elsewhere).
    refetchInterval: (query) => (query.state.data && ENDED.has(query.state.data.status) ? false : 5000),
  });
  const { events } = useRunEvents(runId, () => void client.invalidateQueries({ queryKey: ['run', runId] }));
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
          <pre className="prompt-text">{data.prompt}</pre>
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
      <ol className="events">
        {events.map(({ id, event }) => (
          <li key={id} data-event-id={id}>
            <EventLine event={event} />
          </li>
        ))}
      </ol>
      {data?.response ? (
        <>
          <h2>Answer</h2>
          <p className="answer">{data.response}</p>
        </>
      ) : null}
    </section>
  );
}
