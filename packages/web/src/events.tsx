import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef, useState } from 'react';
import type { RunEvent } from '@mada/protocol';
import { describeCall, exactText } from '@mada/protocol/browser';
import { appendEvent, type EventRow } from './rows.js';

/**
 * A run's events from GET /runs/{id}/events: the stored ones, then live ones, one code path for
 * both. EventSource sends Last-Event-ID when it reconnects, and an event whose id was seen is
 * dropped, so a dropped connection shows each event once. A replay of thousands of events arrives
 * in a burst: they are gathered and handed to React once per frame, not once per event. The
 * text frames of one answer become one row (rows.ts), the same way live and on replay.
 */
export function useRunEvents(runId: string, onEvents: () => void): { events: EventRow[]; ended: boolean } {
  const [events, setEvents] = useState<EventRow[]>([]);
  const [ended, setEnded] = useState(false);
  // A new callback each render must not reopen the stream: the stream calls the latest one.
  const latest = useRef(onEvents);
  latest.current = onEvents;
  useEffect(() => {
    setEvents([]);
    setEnded(false);
    const seen: EventRow[] = [];
    let lastId = 0;
    let frame: number | null = null;
    const flush = (): void => {
      frame = null;
      setEvents(seen.slice());
      latest.current();
    };
    const source = new EventSource(`/runs/${encodeURIComponent(runId)}/events`);
    source.onmessage = (message: MessageEvent<string>) => {
      const id = Number(message.lastEventId);
      if (!(id > lastId)) return;
      lastId = id;
      const event = JSON.parse(message.data) as RunEvent;
      appendEvent(seen, id, event);
      frame ??= requestAnimationFrame(flush);
      // The service closes the stream after the last event; EventSource would open it again.
      if (event.event === 'done' || event.event === 'error') {
        source.close();
        setEnded(true);
      }
    };
    return () => {
      source.close();
      if (frame !== null) cancelAnimationFrame(frame);
    };
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
          <pre className="call">{exactText(JSON.stringify(event.args, null, 2))}</pre>
        </details>
      );
    case 'tool_done':
      return (
        <details>
          <summary>
            Tool result: {event.tool}
            {event.outcome && event.outcome !== 'ok' ? ` (${event.outcome})` : ''}
          </summary>
          <pre className="call">{exactText(event.result_summary)}</pre>
        </details>
      );
    case 'approval_requested':
      return (
        <p>
          Approval asked: <code>{describeCall(event)}</code> ({exactText(event.reason)})
        </p>
      );
    case 'approval_resolved':
      return <p>Approval answered: {event.decision}</p>;
    case 'thinking':
      return <p className="small">{exactText(event.message)}</p>;
    case 'response':
      return <p className="answer">{exactText(event.text)}</p>;
    case 'chunk':
      return <p className="answer">{exactText(event.data)}</p>;
    case 'error':
      return (
        <p role="alert" className="error">
          {exactText(event.error_message)}
        </p>
      );
    case 'done':
      return <p className="small">Done.</p>;
    default:
      return null;
  }
}

/** Within this many pixels of the end, the list follows new events down. */
const FOLLOW_SLACK = 48;

/**
 * The events, virtualised: only those in view (and a few around) are in the page, so a run of
 * 10,000 events scrolls as smoothly as one of ten. Rows are measured as they render, so a tool
 * call opened to show its arguments pushes the rows below it down.
 */
export function EventList({ events, label }: { events: EventRow[]; label: string }) {
  const scroller = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: events.length,
    getScrollElement: () => scroller.current,
    estimateSize: () => 36,
    overscan: 12,
    // A row keeps its first event's id as it grows, so React and the measured sizes follow it.
    getItemKey: (index) => events[index]!.firstId,
  });
  // Following the run: while the reader is at the end, new events scroll into view.
  // An answer's text grows its last row without adding one: its last event id says it changed.
  const following = useRef(true);
  const newest = events.at(-1)?.lastId ?? 0;
  useEffect(() => {
    if (following.current && events.length > 0) virtualizer.scrollToIndex(events.length - 1, { align: 'end' });
  }, [newest, events.length, virtualizer]);

  return (
    <div
      ref={scroller}
      className="events-scroll"
      tabIndex={0}
      role="region"
      aria-label={label}
      onScroll={(event) => {
        const box = event.currentTarget;
        following.current = box.scrollHeight - box.scrollTop - box.clientHeight < FOLLOW_SLACK;
      }}
    >
      <ol className="events" style={{ height: virtualizer.getTotalSize() }}>
        {virtualizer.getVirtualItems().map((item) => {
          const { firstId, lastId, event } = events[item.index]!;
          return (
            <li
              key={item.key}
              data-index={item.index}
              data-event-id={firstId}
              data-last-event-id={lastId}
              ref={virtualizer.measureElement}
              style={{ transform: `translateY(${item.start}px)` }}
            >
              <EventLine event={event} />
            </li>
          );
        })}
      </ol>
    </div>
  );
}
