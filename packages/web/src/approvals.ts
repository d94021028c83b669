import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef } from 'react';
import type { ApprovalListResponse } from '@mada/protocol';
import { api } from './api.js';
import { notifyNew } from './notifications.js';

/**
 * How often the pending approvals are asked for besides the stream (`GET /approvals/events`),
 * which tells of every change at once: only in case the stream is down (a proxy that buffers it,
 * a replica that lost its notices). Two a minute of RATE_LIMIT_PER_MINUTE.
 */
export const PENDING_POLL_MS = 30_000;
/** How long after the stream was refused (not merely dropped: EventSource retries those) it is opened again. */
const REOPEN_MS = 5000;

export const PENDING_KEY = ['approvals', 'pending'] as const;

/** The caller's approvals waiting for an answer, across runs, newest first, as last told. */
export function usePendingApprovals() {
  return useQuery({
    queryKey: PENDING_KEY,
    queryFn: () => api<ApprovalListResponse>('GET', '/approvals?status=pending'),
    refetchInterval: PENDING_POLL_MS,
    refetchIntervalInBackground: true,
  });
}

/**
 * Follows the pending approvals on their stream, for the whole console (mounted once, by its
 * shell): each list the service sends replaces the one shown, so an approval answered elsewhere
 * leaves the Inbox at once, and one that is new fires a browser notification. A stream the
 * service refused (a session that ended: 401) is left to the next request to tell the console,
 * and opened again a little later.
 */
export function useLiveApprovals(): ApprovalListResponse | undefined {
  const client = useQueryClient();
  const seen = useRef<Set<string> | undefined>(undefined);
  const pending = usePendingApprovals();

  useEffect(() => {
    let source: EventSource | undefined;
    let reopen: ReturnType<typeof setTimeout> | undefined;
    const open = (): void => {
      source = new EventSource('/approvals/events');
      source.onmessage = (message: MessageEvent<string>) => {
        client.setQueryData(PENDING_KEY, JSON.parse(message.data) as ApprovalListResponse);
      };
      source.onerror = () => {
        if (source?.readyState !== EventSource.CLOSED) return;
        void client.invalidateQueries({ queryKey: PENDING_KEY });
        reopen = setTimeout(open, REOPEN_MS);
      };
    };
    open();
    return () => {
      clearTimeout(reopen);
      source?.close();
    };
  }, [client]);

  const list = pending.data;
  useEffect(() => {
    if (list === undefined) return;
    // Those waiting when the console opened are not news: only later ones notify.
    if (seen.current !== undefined) notifyNew(list.approvals.filter((approval) => !seen.current!.has(approval.id)));
    seen.current = new Set(list.approvals.map((approval) => approval.id));
  }, [list]);

  return list;
}
