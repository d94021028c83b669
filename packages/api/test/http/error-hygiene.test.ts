import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { buildApp, createLogger } from '../../src/app.js';
import { parseDatabaseUrl } from '../../src/settings.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS, type Dialect } from '../support/databases.js';
import { send } from '../support/raw-http.js';

const ALICE = { 'x-api-key': 'alice-key-0123456789' };
const KEYS = { API_KEYS: 'alice:alice-key-0123456789' };

let t: TestApp | undefined;
let app: Awaited<ReturnType<typeof buildApp>> | undefined;
afterEach(async () => {
  await app?.close();
  await t?.close();
  app = t = undefined;
});

/** The service as main.ts builds it, logging at trace level into `lines`. */
async function loggingApp(options: { dialect?: Dialect; env?: Record<string, string> }, lines: string[]): Promise<string> {
  const sink = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
  const logger = createLogger({ logLevel: 'trace' }, sink);
  t = await createTestApp({ ...options, logger });
  app = await buildApp({ ...t, logger });
  return app.listen({ port: 0, host: '127.0.0.1' });
}

/** Makes the database itself refuse messages containing `forbidden`, as a real constraint failure would. */
async function refuseForbiddenMessages(dialect: Dialect, url: string): Promise<void> {
  const config = parseDatabaseUrl(url);
  if (config.dialect === 'sqlite') {
    const db = new Database(config.path);
    db.exec("CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.content LIKE '%forbidden%' BEGIN SELECT RAISE(ABORT, 'refused by trigger'); END");
    db.close();
    return;
  }
  expect(dialect).toBe('postgres');
  const client = new pg.Client({ connectionString: config.url });
  await client.connect();
  await client.query("ALTER TABLE messages ADD CONSTRAINT refuse CHECK (content NOT LIKE '%forbidden%')");
  await client.end();
}

describe.each(DIALECTS)('a database error on %s', (dialect) => {
  it('answers 500 Internal Server Error, and neither the answer nor the log holds SQL, parameters or the message', async () => {
    const lines: string[] = [];
    const base = await loggingApp({ dialect, env: KEYS }, lines);
    const id = ((await send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { working_dir: t!.workdir } })).json() as { id: string }).id;
    await refuseForbiddenMessages(dialect, t!.database.url);
    const saved = await send(base, {
      method: 'POST',
      path: `/conversations/${id}/save`,
      headers: ALICE,
      body: { user_content: 'a forbidden private note', assistant_content: 'reply text' },
    });
    expect([saved.status, saved.json()]).toEqual([500, { detail: 'Internal Server Error' }]);
    const streamed = await send(base, { method: 'POST', path: `/conversations/${id}/stream`, headers: ALICE, body: { content: 'forbidden words' } });
    // The user message is stored before the stream starts, so the failure is an ordinary 500.
    expect([streamed.status, streamed.json()]).toEqual([500, { detail: 'Internal Server Error' }]);
    const everything = [saved.text, streamed.text, ...lines].join('\n');
    expect(lines.some((line) => line.includes('"error":{"type":"SqliteError"') || line.includes('"error":{"type":"error"'))).toBe(true);
    for (const leak of [/private note/, /forbidden words/, /reply text/, /insert into/i, /params/, /alice-key/]) expect(everything).not.toMatch(leak);
  });
});

describe('request logs', () => {
  it('redact a key sent in the query string', async () => {
    const lines: string[] = [];
    const base = await loggingApp({ env: KEYS }, lines);
    await send(base, { path: '/agents/?api_key=alice-key-0123456789&x=1', headers: ALICE });
    await send(base, { path: '/agents/?token=other-secret-value' });
    const text = lines.join('\n');
    expect(text).toMatch(/"url":"\/agents\/\?api_key=\[REDACTED\]&x=1"/);
    expect(text).not.toMatch(/alice-key|other-secret-value/);
  });
});

describe('internal addresses', () => {
  // createTestApp points the model runtime at 127.0.0.1:9, where nothing listens.
  const runtimeAddress = /127\.0\.0\.1|:9\b/;

  it('are hidden from keyed users in errors, and kept in the log', async () => {
    const lines: string[] = [];
    const base = await loggingApp({ env: { ...KEYS, RETRY_MAX_ATTEMPTS: '1' } }, lines);
    const run = (await send(base, { method: 'POST', path: '/agents/run', headers: ALICE, body: { agent_type: 'explore', prompt: 'hi' } })).json() as {
      success: boolean;
      error: string;
    };
    expect(run.success).toBe(false);
    expect(run.error).toMatch(/<internal address>/);
    expect(run.error).not.toMatch(runtimeAddress);
    const id = ((await send(base, { method: 'POST', path: '/conversations/', headers: ALICE, body: { working_dir: t!.workdir } })).json() as { id: string }).id;
    const turn = await send(base, { method: 'POST', path: `/conversations/${id}/messages`, headers: ALICE, body: { content: 'hi' } });
    expect(turn.status).toBe(500);
    expect((turn.json() as { detail: string }).detail).toMatch(/^Agent error: .*<internal address>/);
    expect(turn.text).not.toMatch(runtimeAddress);
    expect(lines.join('\n')).toMatch(/127\.0\.0\.1:9/);
  });

  it('are shown to the owner in local mode', async () => {
    const lines: string[] = [];
    const base = await loggingApp({ env: { RETRY_MAX_ATTEMPTS: '1' } }, lines);
    const run = (await send(base, { method: 'POST', path: '/agents/run', body: { agent_type: 'explore', prompt: 'hi' } })).json() as { error: string };
    expect(run.error).toMatch(/127\.0\.0\.1:9/);
  });
});
