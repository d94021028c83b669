import { useQuery } from '@tanstack/react-query';
import type { ApprovalListResponse } from '@mada/protocol';
import { api } from './api.js';

/**
 * How often the pending approvals are asked for: an approval shows within this of being asked.
 * Every view asks (the title counts them), so this is most of the console's share of
 * RATE_LIMIT_PER_MINUTE (120 by default): 30 a minute, leaving room for the other views.
 */
export const PENDING_POLL_MS = 2000;

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
