/** A JSON body as the tests read it. */
export type Json = Record<string, unknown>;

export interface Answer {
  status: number;
  body: Json;
}

/** One JSON request over real HTTP, as a client sends it: with `key` as X-API-Key when given. */
export async function call(address: string, key: string | undefined, method: string, path: string, body?: Json): Promise<Answer> {
  const response = await fetch(`${address}${path}`, {
    method,
    headers: { ...(key === undefined ? {} : { 'x-api-key': key }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json) };
}
