import Database from 'better-sqlite3';
import pg from 'pg';
import { move } from 'piscina';

/**
 * Reads one large stored message on a worker thread (see large-content.ts). better-sqlite3 is
 * synchronous: a 60 MiB row held the service's event loop for over a second while SQLite copied it
 * and V8 made a string of it. Here the copy costs a thread, and the bytes come back moved, not
 * copied, to be sent a slice at a time.
 */

export type ContentSource = { dialect: 'sqlite'; path: string } | { dialect: 'postgres'; url: string };

export interface ContentTask {
  source: ContentSource;
  messageId: string;
}

/** One connection per thread, opened on its first task and kept while the thread is. */
let sqlite: { path: string; db: Database.Database; statement: Database.Statement } | undefined;
let postgres: { url: string; client: Promise<pg.Client> } | undefined;

function sqliteContent(path: string, messageId: string): Buffer | undefined {
  if (sqlite?.path !== path) {
    sqlite?.db.close();
    // Read-only beside the service's own connection: in WAL mode readers never wait for its writes.
    const db = new Database(path, { readonly: true, fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    // A text cast to a blob comes as its UTF-8 bytes, with no string made of them.
    sqlite = { path, db, statement: db.prepare('select cast(content as blob) as content from messages where id = ?') };
  }
  const row = sqlite.statement.get(messageId) as { content: Buffer } | undefined;
  return row?.content;
}

async function postgresContent(url: string, messageId: string): Promise<Buffer | undefined> {
  if (postgres?.url !== url) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 });
    // A connection dropped by the server fails the next task; it must not end the thread.
    client.on('error', () => undefined);
    postgres = { url, client: client.connect().then(() => client) };
  }
  const client = await postgres.client;
  try {
    const result = await client.query<{ content: string }>('select content from messages where id = $1', [messageId]);
    const content = result.rows[0]?.content;
    return content === undefined ? undefined : Buffer.from(content, 'utf8');
  } catch (error) {
    // The next task opens a new connection rather than reuse one that failed.
    postgres = undefined;
    await client.end().catch(() => undefined);
    throw error;
  }
}

/** The content's UTF-8 bytes in an ArrayBuffer of their own, moved to the caller; null when the message is gone. */
export default async function readContent(task: ContentTask): Promise<unknown> {
  const bytes = task.source.dialect === 'sqlite' ? sqliteContent(task.source.path, task.messageId) : await postgresContent(task.source.url, task.messageId);
  if (bytes === undefined) return null;
  // Only a buffer that is its whole ArrayBuffer can be moved; a pooled or offset one is copied here, off the loop.
  const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : Buffer.from(bytes);
  return move(own.buffer as ArrayBuffer);
}
