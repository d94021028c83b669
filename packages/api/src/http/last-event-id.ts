/** Where a run-events stream starts: after `Last-Event-ID` when the client sent it, else after `?after=`, else at the start. */
export function lastEventId(header: string | string[] | undefined, after: number | undefined): number {
  if (typeof header === 'string' && /^\d+$/.test(header)) return Number(header);
  return after ?? 0;
}
