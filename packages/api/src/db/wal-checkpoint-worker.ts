import Database from 'better-sqlite3';

/*
 * Checkpoints a SQLite database's write-ahead log on a worker thread (wal-checkpoints.ts). A
 * checkpoint copies the log's pages into the database file between two fsyncs: run by the
 * service's own connection, as SQLite does after the commit that grows the log past its limit,
 * it held the event loop for a millisecond to a hundred, at every thousandth page written.
 */

export interface CheckpointTask {
  path: string;
}

/** What PRAGMA wal_checkpoint reports: pages in the log, and how many of them are now in the database file. */
export interface CheckpointOutcome {
  busy: number;
  log: number;
  checkpointed: number;
}

/**
 * PASSIVE copies what it can without waiting for the service's writer or any reader: the
 * service's connection never waits on it. A connection of its own for each checkpoint, closed
 * after it, so the thread holds no database between checkpoints (and none past the service's).
 */
export default function checkpoint(task: CheckpointTask): CheckpointOutcome {
  const db = new Database(task.path, { fileMustExist: true });
  try {
    const [outcome] = db.pragma('wal_checkpoint(PASSIVE)') as CheckpointOutcome[];
    return outcome ?? { busy: 0, log: 0, checkpointed: 0 };
  } finally {
    db.close();
  }
}
