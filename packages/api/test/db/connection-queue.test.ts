import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConnectionQueue } from '../../src/db/connection-queue.js';

/**
 * The queue in front of the service's one SQLite connection, on a real database file, watched
 * through a second connection: what that one sees is what is committed.
 */
describe('SQLite connection queue', () => {
  let dir: string;
  let writer: Database.Database;
  let observer: Database.Database;
  let queue: ConnectionQueue;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'mada-queue-'));
    writer = new Database(join(dir, 'db.sqlite'));
    writer.pragma('journal_mode = WAL');
    writer.pragma('foreign_keys = ON');
    writer.exec(`
      create table parent (id integer primary key);
      create table child (id integer primary key, parent_id integer references parent(id) deferrable initially deferred);
      insert into parent (id) values (1);
    `);
    observer = new Database(join(dir, 'db.sqlite'), { readonly: true });
    queue = new ConnectionQueue(writer);
  });
  afterEach(() => {
    observer.close();
    writer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const committedChildren = (): number[] => (observer.prepare('select id from child order by id').all() as { id: number }[]).map((row) => row.id);
  const insertChild = (id: number, parentId = 1) => async () => {
    writer.prepare('insert into child (id, parent_id) values (?, ?)').run(id, parentId);
    // Work is asynchronous in the service (drizzle's promises): the connection stays taken across it.
    await Promise.resolve();
    return id;
  };

  it('answers each of many queued transactions only once its work is committed', async () => {
    const seenAtAnswer: number[][] = [];
    const answers = Array.from({ length: 20 }, (_, i) => queue.transaction(insertChild(i + 1)).then(() => seenAtAnswer.push(committedChildren())));
    await Promise.all(answers);

    expect(committedChildren()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // Every caller, at the moment it heard back, could already read its row from another connection.
    seenAtAnswer.forEach((seen, i) => expect(seen.length).toBeGreaterThanOrEqual(i + 1));
  });

  it('undoes a failing transaction alone and commits the ones queued around it', async () => {
    const results = await Promise.allSettled([
      queue.transaction(insertChild(1)),
      queue.transaction(async () => {
        writer.prepare('insert into child (id, parent_id) values (2, 1)').run();
        throw new Error('the work failed half-way');
      }),
      queue.transaction(insertChild(3)),
    ]);

    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committedChildren()).toEqual([1, 3]);
  });

  it('fails every transaction of a COMMIT that fails, and stores none of them', async () => {
    // The foreign key is checked at COMMIT: the orphan row makes it fail for the whole group.
    const results = await Promise.allSettled([queue.transaction(insertChild(1)), queue.transaction(insertChild(2, 99)), queue.transaction(insertChild(3))]);

    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(committedChildren()).toEqual([]);
    // The connection is usable again afterwards.
    await queue.transaction(insertChild(4));
    expect(committedChildren()).toEqual([4]);
  });

  it('runs a plain job only after the transactions queued before it are committed, outside any transaction', async () => {
    const first = queue.transaction(insertChild(1));
    const plain = queue.run(async () => ({ committed: committedChildren(), inTransaction: writer.inTransaction }));
    const later = queue.transaction(insertChild(2));

    expect(await plain).toEqual({ committed: [1], inTransaction: false });
    await Promise.all([first, later]);
    expect(committedChildren()).toEqual([1, 2]);
  });

  it('gives the connection to one job at a time, in the order they were queued', async () => {
    const order: string[] = [];
    const job = (name: string) => async () => {
      order.push(`${name} start`);
      await new Promise((resolve) => setTimeout(resolve, 5));
      order.push(`${name} end`);
    };
    await Promise.all([queue.transaction(job('a')), queue.run(job('b')), queue.transaction(job('c')), queue.transaction(job('d'))]);
    await queue.idle();

    expect(order).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end', 'd start', 'd end']);
  });
});
