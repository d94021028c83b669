/**
 * The console's one way to the service: same origin, the session cookie (never a key), JSON both
 * ways. The routes and shapes are the API's own (`@mada/protocol`), the same the CLI uses.
 */

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

/** What a failed request says: the service's `detail`, or what went wrong before an answer. */
export const errorText = (error: Error): string => (error instanceof ApiError ? error.detail : error.message);

/** Told when the service stops knowing who we are (a session that ended, a revoked key). */
let onSignedOut: () => void = () => undefined;
export function whenSignedOut(listener: () => void): void {
  onSignedOut = listener;
}

function detailOf(body: unknown, status: number): string {
  if (typeof body === 'object' && body !== null && 'detail' in body) {
    const detail = (body as { detail: unknown }).detail;
    if (typeof detail === 'string') return detail;
    if (Array.isArray(detail)) return detail.map((item: { msg?: unknown }) => String(item.msg ?? '')).join('; ');
  }
  return `HTTP ${status}`;
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const parsed: unknown = text === '' ? undefined : JSON.parse(text);
  if (!response.ok) {
    const error = new ApiError(response.status, detailOf(parsed, response.status));
    if (response.status === 401 && path !== '/session') onSignedOut();
    throw error;
  }
  return parsed as T;
}
