import { useQuery } from '@tanstack/react-query';
import type { ApprovalListResponse } from '@mada/protocol';
import { api } from './api.js';

/** How often the pending approvals are asked for: an approval shows within this of being asked. */
export const PENDING_POLL_MS = 1000;

export const PENDING_KEY = ['approvals', 'pending'] as const;

/** The caller's approvals waiting for an answer, across runs, newest first. */
export function usePendingApprovals() {
  return useQuery({
    queryKey: PENDING_KEY,
    queryFn: () => api<ApprovalListResponse>('GET', '/approvals?status=pending'),
    refetchInterval: PENDING_POLL_MS,
    refetchIntervalInBackground: true,
  });
}
