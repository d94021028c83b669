/** Query parameters whose values are credentials, by name (`api_key`, `token`, `password`, ...). */
const SECRET_PARAM = /key|token|secret|passw|auth|sig/i;

/** A request URL fit for a log line: the value of every credential-like query parameter replaced. */
export function redactUrl(url: string): string {
  const query = url.indexOf('?');
  if (query < 0) return url;
  const parts = url
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const equals = pair.indexOf('=');
      const rawName = equals < 0 ? pair : pair.slice(0, equals);
      let name = rawName;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        // A malformed name is compared as it was sent.
      }
      return equals >= 0 && SECRET_PARAM.test(name) ? `${rawName}=[REDACTED]` : pair;
    });
  return `${url.slice(0, query)}?${parts.join('&')}`;
}

interface LoggedRequest {
  method: string;
  url: string;
  host?: string | undefined;
  ip?: string | undefined;
  socket?: { remotePort?: number | undefined } | undefined;
}

/** pino's `req` serializer: what a request log line says about the request, nothing more. */
export function serializeRequest(request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}
