import Database from 'better-sqlite3';
import pg from 'pg';
import { move } from 'piscina';
import type { RunTextColumn } from './run-repository.js';

/*
 * Reads one large stored text on a worker thread: a message's content (large-content.ts) or a
 * run's prompt, response, error or one event's data (drizzle-run-repository.ts). better-sqlite3 is synchronous:
 * a 60 MiB row held the service's event loop for seconds while SQLite copied it and V8 made a
 * string of it. Here the copy costs a thread, and the bytes come back moved, not copied, to be
 * sent a slice at a time.
 */

export type ContentSource = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

/** A run's large text: one of its columns, or the data of one of its events. */
export type RunTextRef = { runId: string; column: RunTextColumn } | { runId: string; seq: number };

/** Which text: a message's content, or one of a run's. */
export type LargeTextRef = { messageId: string } | RunTextRef;

export interface LargeTextTask {
  source: ContentSource;
  text: LargeTextRef;
}

type Kind = 'message' | RunTextColumn | 'event';

/** Statements by the text they read; column names come from this table, never from input. */
const SQLITE: Record<Kind, string> = {
  // A text cast to a blob comes as its UTF-8 bytes, with no string made of them.
  message: 'select cast(content as blob) as text from messages where id = ?',
  prompt: 'select cast(prompt as blob) as text from runs where id = ?',
  response: 'select cast(response as blob) as text from runs where id = ?',
  error: 'select cast(error as blob) as text from runs where id = ?',
  event: 'select cast(data as blob) as text from run_events where run_id = ? and seq = ?',
};
const POSTGRES: Record<Kind, string> = {
  message: 'select content as text from messages where id = $1',
  prompt: 'select prompt as text from runs where id = $1',
  response: 'select response as text from runs where id = $1',
  error: 'select error as text from runs where id = $1',
  event: 'select data as text from run_events where run_id = $1 and seq = $2',
};

function statementOf(text: LargeTextRef): [Kind, unknown[]] {
  if ('messageId' in text) return ['message', [text.messageId]];
  return 'seq' in text ? ['event', [text.runId, text.seq]] : [text.column, [text.runId]];
}

/** One connection per thread, opened on its first task and kept while the thread is. */
let sqlite: { path: string; db: Database.Database; statements: Map<Kind, Database.Statement> } | undefined;
let postgres: { url: string; client: Promise<pg.Client> } | undefined;

function sqliteText(path: string, text: LargeTextRef): Buffer | undefined {
  if (sqlite?.path !== path) {
    sqlite?.db.close();
    // Read-only beside the service's own connection: in WAL mode readers never wait for its writes.
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    sqlite = { path, db, statements: new Map() };
  }
  const [kind, params] = statementOf(text);
  let statement = sqlite.statements.get(kind);
  if (!statement) sqlite.statements.set(kind, (statement = sqlite.db.prepare(SQLITE[kind])));
  const row = statement.get(...params) as { text: Buffer | null } | undefined;
  return row?.text ?? undefined;
}

async function postgresText(url: string, text: LargeTextRef): Promise<Buffer | undefined> {
  if (postgres?.url !== url) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    // A connection dropped by the server fails the next task; it must not end the thread.
    client.on('error', () => undefined);
    postgres = { url, client: client.connect().then(() => client) };
  }
  const client = await postgres.client;
  const [kind, params] = statementOf(text);
  try {
    const result = await client.query<{ text: string | null }>(POSTGRES[kind], params);
    const value = result.rows[0]?.text;
    return value === undefined || value === null ? undefined : Buffer.from(value, 'utf8');
  } catch (error) {
    // The next task opens a new connection rather than reuse one that failed.
    postgres = undefined;
    await client.end().catch(() => undefined);
    throw error;
  }
}

/** The text's UTF-8 bytes in an ArrayBuffer of their own, moved to the caller; null when it is gone. */
export default async function readLargeText(task: LargeTextTask): Promise<unknown> {
  const bytes = task.source.dialect === 'sqlite' ? sqliteText(task.source.path, task.text) : await postgresText(task.source.url, task.text);
  if (bytes === undefined) return null;
  // Only a buffer that is its whole ArrayBuffer can be moved; a pooled or offset one is copied here, off the loop.
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : Buffer.from(bytes);
  return move(own.buffer as ArrayBuffer);
}
