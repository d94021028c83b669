import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { RunEventRecord } from '../db/run-repository.js';

/**
 * Tells followers of a run that it has new stored events. Followers read the events from the store,
 * so a missed or doubled signal can never lose or repeat a frame. In the process that stored it, the
 * signal may carry the stored event, which spares a follower that is up to date the read.
 */
export interface RunEventBus {
  /** Calls `listener` after each publish for this run; returns the unsubscribe function. */
  subscribe(runId: string, listener: (stored?: RunEventRecord) => void): () => void;
  /**
   * Announces new events of a run: to this process, and on PostgreSQL to every replica. `stored`,
   * the event just committed, goes to this process's followers only.
   */
  publish(runId: string, stored?: RunEventRecord): Promise<void>;
  close(): Promise<void>;
  /** How often a follower reads the store on its own, for notifications this bus may lose. */
  readonly pollMs: number;
}

/** One process: SQLite deployments, where every follower lives in the process that runs. */
export class LocalEventBus implements RunEventBus {
  protected readonly emitter = new EventEmitter();
  /**
   * In one process no notification is lost: the poll is only a safety net. Kept long, since a
   * thousand idle followers polling every few seconds would cost the service more than its runs.
   */
  readonly pollMs: number = 60_000;

  constructor() {
    // One listener per open event stream: thousands of idle followers are expected.
    this.emitter.setMaxListeners(0);
  }

  subscribe(runId: string, listener: (stored?: RunEventRecord) => void): () => void {
    this.emitter.on(runId, listener);
    return () => this.emitter.off(runId, listener);
  }

  async publish(runId: string, stored?: RunEventRecord): Promise<void> {
    this.emitter.emit(runId, stored);
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
  }
}

const CHANNEL = 'mada_run_events';
const RECONNECT_MS = 1000;

interface Log {
  warn(object: object, message: string): void;
}

/**
 * Several replicas on one PostgreSQL database: a dedicated connection LISTENs, and publishing
 * sends NOTIFY, so a follower on replica B wakes when replica A stores an event. The connection is
 * re-opened when it drops; followers also poll, so events stored meanwhile still arrive.
 */
export class PostgresEventBus extends LocalEventBus {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;
  /** Tells this bus's own notifications apart: two replicas may even share a process (tests). */
  private readonly instance = randomUUID();
  /** Notifications sent while the listener reconnects are lost: followers look on their own this often. */
  override readonly pollMs = 2000;

  constructor(
    private readonly url: string,
    private readonly log: Log,
  ) {
    super();
  }

  /** Opens the listening connection; start-up waits for it so the first runs are followed live. */
  async start(): Promise<void> {
    await this.connection();
  }

  override async publish(runId: string, stored?: RunEventRecord): Promise<void> {
    // Local followers need no round trip; remote ones hear the NOTIFY (ours is ignored below).
    this.emitter.emit(runId, stored);
    try {
      const client = await this.connection();
      await client.query('select pg_notify($1, $2)', [CHANNEL, `${this.instance}:${runId}`]);
    } catch (error) {
      this.log.warn({ err: error }, 'run event notification failed; followers on other replicas will poll');
    }
  }

  override async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await super.close();
    await client?.end().catch(() => undefined);
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.open().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async open(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.url, connectionTimeoutMillis: 5000 });
    client.on('notification', (message) => this.onNotification(message.payload ?? ''));
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client));
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    if (this.closed) {
      await client.end();
      throw new Error('event bus closed');
    }
    this.client = client;
    return client;
  }

  private onNotification(payload: string): void {
    const colon = payload.indexOf(':');
    // This bus's own NOTIFY was already delivered locally when it was published.
    if (payload.slice(0, colon) === this.instance) return;
    this.emitter.emit(payload.slice(colon + 1));
  }

  private lost(client: pg.Client, error?: Error): void {
    if (this.client !== client) return;
    this.client = undefined;
    if (error) this.log.warn({ err: error }, 'run event listener connection lost; reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.connection().catch(() => this.scheduleReconnect());
    }, RECONNECT_MS);
    this.retry.unref();
  }
}
