/** What the queue needs of a SQLite connection (better-sqlite3's Database). */
export interface TransactionalConnection {
  prepare(sql: string): { run(): unknown };
  readonly inTransaction: boolean;
}

type Control = 'BEGIN IMMEDIATE' | 'SAVEPOINT grouped_work' | 'RELEASE grouped_work' | 'ROLLBACK TO grouped_work' | 'COMMIT' | 'ROLLBACK';

interface Job {
  /** A transaction that may share its COMMIT with the transactions queued right after it. */
  grouped: boolean;
  /** Runs the job; never throws (each job settles its own caller). */
  start(): Promise<void>;
}

/** How many transactions at most share one COMMIT: bounds how long the first one waits for it. */
const MAX_GROUP = 16;

/**
 * Gives one SQLite connection to one job at a time. A connection is one session: a transaction
 * left open across an `await` would otherwise take in the statements of other requests.
 *
 * Transactions queued back to back, or within one turn of the event loop, share one BEGIN ...
 * COMMIT (group commit), each inside its own SAVEPOINT, so a failing one is undone alone. Under
 * load, most transactions are runs storing events, and one COMMIT per event (its WAL frames, the
 * lock taken and released) was the largest cost left in storing them; grouped, the 100 runs of
 * the load bench commit about ten events at a time. Each caller is answered only once the COMMIT
 * that holds its work is done, so nothing is reported stored before it is; a failed COMMIT fails
 * every transaction in it. The first transaction of a group needs no SAVEPOINT: if it fails, the
 * whole transaction, which holds nothing else, is rolled back. Plain jobs run outside any transaction: an open group is committed
 * before one starts, so it never sees (or sends on) work that is not committed yet.
 */
export class ConnectionQueue {
  private readonly jobs: Job[] = [];
  /** The outcome of each transaction in the open group, called with the COMMIT's failure if any. */
  private group: Array<(failure: unknown) => void> = [];
  private draining = false;
  private commitScheduled = false;
  /** The transaction statements, each prepared once: parsing them anew cost as much as running them. */
  private readonly controls = new Map<Control, { run(): unknown }>();

  /** `committed` is called after each COMMIT that succeeded. */
  constructor(
    private readonly connection: TransactionalConnection,
    private readonly committed: () => void = () => undefined,
  ) {}

  private exec(control: Control): void {
    let statement = this.controls.get(control);
    if (!statement) {
      statement = this.connection.prepare(control);
      this.controls.set(control, statement);
    }
    statement.run();
  }

  /** Runs `work` alone on the connection, outside any transaction. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue({
        grouped: false,
        start: async () => {
          try {
            resolve(await work());
          } catch (error) {
            reject(error);
          }
        },
      });
    });
  }

  /** Runs `work` all or nothing; resolves once it is committed. */
  transaction<T>(work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.enqueue({ grouped: true, start: () => this.inGroup(work, resolve, reject) });
    });
  }

  /** Resolves once every job queued so far has run and its work is committed. */
  idle(): Promise<void> {
    return this.run(async () => undefined);
  }

  private enqueue(job: Job): void {
    this.jobs.push(job);
    if (this.draining) return;
    this.draining = true;
    // Each job answers its own caller; the loop itself catches everything (see drain).
    this.drain().catch(() => undefined);
  }

  /** Runs the queued jobs in order; never rejects: job failures go to their callers, SQL errors of COMMIT/ROLLBACK to the group's. */
  private async drain(): Promise<void> {
    try {
      for (let job = this.jobs.shift(); job !== undefined; job = this.jobs.shift()) {
        if (!job.grouped) this.commitGroup();
        await job.start();
        if (!job.grouped) continue;
        if (this.group.length >= MAX_GROUP || this.jobs[0]?.grouped === false) this.commitGroup();
      }
    } finally {
      this.draining = false;
    }
    // Transactions queued by the rest of this turn of the event loop (other runs' tokens that
    // arrived with this one) join the open group; it is committed once that turn is over.
    if (this.connection.inTransaction && !this.commitScheduled) {
      this.commitScheduled = true;
      setImmediate(() => {
        this.commitScheduled = false;
        if (!this.draining) this.commitGroup();
      });
    }
  }

  private async inGroup<T>(work: () => Promise<T>, resolve: (value: T) => void, reject: (error: unknown) => void): Promise<void> {
    const first = !this.connection.inTransaction;
    try {
      // IMMEDIATE takes the write lock up front: two processes on one file never deadlock upgrading a read lock.
      this.exec(first ? 'BEGIN IMMEDIATE' : 'SAVEPOINT grouped_work');
    } catch (error) {
      reject(error);
      return;
    }
    try {
      const result = await work();
      if (!first) this.exec('RELEASE grouped_work');
      this.group.push((failure) => (failure === undefined ? resolve(result) : reject(failure)));
    } catch (error) {
      this.undo(first, error);
      reject(error);
    }
  }

  /** Undoes the failed transaction's own work; if SQLite rolled back the whole group, the others fail with it. */
  private undo(first: boolean, error: unknown): void {
    try {
      if (!first && this.connection.inTransaction) {
        this.exec('ROLLBACK TO grouped_work');
        this.exec('RELEASE grouped_work');
        return;
      }
    } catch {
      // Falls through: the group cannot be trusted any more.
    }
    this.rollBack();
    this.settleGroup(error);
  }

  private commitGroup(): void {
    if (!this.connection.inTransaction) {
      // Work that reported success but whose transaction is gone was never committed.
      return this.settleGroup(this.group.length === 0 ? undefined : new Error('SQLite rolled the transaction back'));
    }
    try {
      this.exec('COMMIT');
      this.settleGroup(undefined);
      this.committed();
    } catch (error) {
      this.rollBack();
      this.settleGroup(error);
    }
  }

  private rollBack(): void {
    try {
      if (this.connection.inTransaction) this.exec('ROLLBACK');
    } catch {
      // SQLite already ended the transaction (it does so itself on some errors).
    }
  }

  private settleGroup(failure: unknown): void {
    const outcomes = this.group;
    this.group = [];
    for (const settle of outcomes) settle(failure);
  }
}

