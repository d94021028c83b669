import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ env: { MAX_BODY_BYTES: '2048' } });
});
afterAll(async () => t.close());

const post = (payload: string | object | undefined, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: '/conversations/00000000-0000-4000-8000-000000000000/save',
    headers: { 'content-type': 'application/json', ...headers },
    ...(payload === undefined ? {} : { payload }),
  });

describe('error bodies', () => {
  it('answers a missing field with 422 in FastAPI’s shape', async () => {
    const response = await post({ assistant_content: 'x' });
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ detail: [{ loc: ['body', 'user_content'], msg: 'Field required', type: 'missing' }] });
  });

  it('answers a wrong type with 422 naming the field and the expected type', async () => {
    const response = await post({ user_content: 42, assistant_content: 'x' });
    expect(response.json()).toEqual({
      detail: [{ loc: ['body', 'user_content'], msg: 'Input should be a valid string', type: 'string_type' }],
    });
  });

  it('answers an empty body with 422', async () => {
    const response = await post('');
    expect(response.statusCode).toBe(422);
    expect(response.json()).toEqual({ detail: [{ loc: ['body'], msg: 'Field required', type: 'missing' }] });
  });

  it('answers malformed JSON with 422 json_invalid', async () => {
    const response = await post('{"user_content": ');
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid' });
  });

  it('answers a body that is not an object with 422', async () => {
    const response = await post('[1,2]');
    expect(response.statusCode).toBe(422);
    expect(response.json().detail[0]).toMatchObject({ loc: ['body'], type: 'object_type' });
  });

  it('answers an unknown route with 404 Not Found', async () => {
    const response = await t.app.inject({ url: '/nowhere' });
    expect([response.statusCode, response.json()]).toEqual([404, { detail: 'Not Found' }]);
  });

  it('answers a body over the size limit with 413', async () => {
    const response = await post({ user_content: 'x'.repeat(4096), assistant_content: '' });
    expect([response.statusCode, response.json()]).toEqual([413, { detail: 'Request body is too large' }]);
  });

  it('answers an unsupported content type with 415 and a detail', async () => {
    const response = await post('hello', { 'content-type': 'text/csv' });
    expect(response.statusCode).toBe(415);
    expect(response.json()).toEqual({ detail: 'Unsupported media type: send application/json' });
  });

  it('never sends a stack trace', async () => {
    for (const response of [await post('{'), await post('')]) expect(response.body).not.toMatch(/at .+\(.+:\d+:\d+\)/);
  });
});
