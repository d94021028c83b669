import type { NewAuditEntry } from './audit-repository.js';
import { appendAuditIn } from './drizzle-audit-repository.js';
import { and, count, desc, eq, getTableColumns, gt, gte, inArray, isNotNull, isNull, lt, min, or, sql, type Column, type SQL } from 'drizzle-orm';
import type { Db, DialectAdapter, PreparableQuery, PreparedStatement } from './dialect.js';
import { appendMessagesIn } from './append-messages.js';
import { addDailyUsage, dailyUsageSince } from './daily-usage.js';
import { largeSlices } from './large-content.js';
import { eventSizesAfter, framesWithIds, framesWithoutIds, pageSizesAfter, pagesAfter } from './run-event-statements.js';
import type { LargeTextReader } from './large-content.js';
import type { RunTextRef } from './large-text-worker.js';
import type { DeliveryOutbox, NoticeWriter } from './webhook-deliveries.js';
import {
  ACTIVE_RUN_STATUSES,
  EVENT_PAGE_CHARS,
  INLINE_PAGE_BYTES,
  INLINE_TEXT_BYTES,
  PAGED_RUN_MIN_EVENTS,
  type EventFrames,
  type LargeEvent,
  type RunHead,
  type RunTextColumn,
  type RunView,
  type FrameBytes,
  type CreateRunOptions,
  type CreatedRun,
  type ClaimOutcome,
  DailyRunQuotaReached,
  DailyTokenQuotaReached,
  type RunQuotaCheck,
  RunConversationActiveError,
  RunConversationGoneError,
  type NewRun,
  QueuedRunLimitReached,
  type RunChanges,
  type RunEnding,
  type RunEventRecord,
  type RunListPage,
  type RunRecord,
  type RunRepository,
  type RunStatus,
  type RunUsage,
} from './run-repository.js';

/** The first key of the advisory locks that serialize one user's run creations and starts (the second is the user's). */
const QUEUED_RUNS_LOCK = 0x6d616471;

/** Thrown inside a turn's creation to roll its user message back: the key names an earlier run. */
class KeyTaken extends Error {
  constructor(readonly run: RunRecord) {
    super('idempotency key taken');
  }
}

/** The index that keeps one active run per conversation, by name (PostgreSQL) or by column (SQLite). */
const ACTIVE_CONVERSATION_INDEX = 'runs_conversation_active_idx';

/** A unique violation of ACTIVE_CONVERSATION_INDEX, from either driver, under drizzle's wrapper. */
function isActiveConversationConflict(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; depth++) {
    const { code, constraint } = current as { code?: unknown; constraint?: unknown };
    if (code === '23505' && constraint === ACTIVE_CONVERSATION_INDEX) return true;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' && current.message.includes('runs.conversation_id')) return true;
    current = current.cause;
  }
  return false;
}

/** Events read at a time to build an ended run's pages. */
const PAGE_SOURCE_ROWS = 5000;

/**
 * Runs and their events over drizzle, for both dialects. Appending an event first increments the
 * run's last_event_id: on PostgreSQL that UPDATE locks the run row until commit, so concurrent
 * appends serialize and seqs come out gapless; on SQLite the adapter runs one job at a time.
 */
export class DrizzleRunRepository implements RunRepository {
  private readonly t;
  /** The statements of every stored event and every follower's wake-up, built once (dialect.ts). */
  private readonly statements;
  /**
   * Every run's start and end (and each approval) changes its row: those statements are prepared
   * once per shape instead of built by drizzle and prepared anew, which under load cost more than
   * the statements themselves. Shapes come from the code, never from input, so they are few.
   */
  private readonly shaped = new Map<string, PreparedStatement<RunRecord[]>>();
  private readonly texts: (text: RunTextRef) => Promise<Buffer | undefined>;
  /** GET /runs/{id} and a follower's look at its run: prepared once, as findRun is. */
  private readonly viewById: PreparedStatement<ViewRow[]>;

  /**
   * `texts` loads large texts (large-content.ts: on worker threads); without it (an in-memory SQLite
   * database, which no other connection can open) they are read here.
   */
  constructor(
    private readonly adapter: DialectAdapter,
    private readonly outbox: DeliveryOutbox,
    texts?: LargeTextReader,
  ) {
    this.t = adapter.tables;
    this.statements = hotStatements(adapter);
    this.texts = texts?.load ?? ((text) => this.textHere(text));
    const r = this.t.runs;
    this.viewById = adapter.prepared('run_view_by_id', (db) =>
      db
        .select(this.viewColumns(() => sql`true`))
        .from(r)
        .where(eq(r.id, sql.placeholder('id'))),
    );
  }

  async createRun(input: NewRun, options: CreateRunOptions): Promise<CreatedRun> {
    try {
      return await this.adapter.transaction((tx) => this.createIn(tx, input, options));
    } catch (error) {
      if (error instanceof KeyTaken) return { run: error.run, created: false };
      if (input.conversationId !== null && isActiveConversationConflict(error)) throw new RunConversationActiveError();
      throw error;
    }
  }

  private async createIn(tx: Db, input: NewRun, options: CreateRunOptions): Promise<CreatedRun> {
    const r = this.t.runs;
    const { now, ...fields } = input;
    // The turn's message first: its UPDATE of the conversation row serializes turns of one
    // conversation on PostgreSQL, and a conversation deleted meanwhile stores nothing.
    const turn = options.userMessage && (await appendMessagesIn(this.t, tx, input.conversationId!, [options.userMessage.message], { now, titleIfUnset: options.userMessage.titleIfUnset }));
    if (options.userMessage && !turn) throw new RunConversationGoneError();
    if (input.idempotencyKey !== null) {
      // A key past its window names nothing any more: release it for this request.
      await tx
        .update(r)
        .set({ idempotencyKey: null })
        .where(and(eq(r.userId, input.userId), eq(r.idempotencyKey, input.idempotencyKey), lt(r.createdAt, options.idempotentSince)));
    }
    const quota = options.quota;
    // Starting at once needs a free place among the user's executing runs, on any replica.
    const full = quota !== undefined && input.status === 'running' && quota.maxConcurrent > 0;
    const daily = quota !== undefined && (quota.maxRunsPerDay > 0 || quota.maxTokensPerDay > 0);
    const mayQueue = options.maxQueued !== undefined && (input.status === 'queued' || full);
    // Concurrent creations (and starts) for one user, on any replica, take turns, so each counts the others'.
    if (mayQueue || full || daily) await this.lockUser(tx, input.userId);
    const queued = full && (await this.executingOf(tx, input.userId)) >= quota.maxConcurrent;
    const values: Record<string, unknown> = { ...fields, ...(queued ? { status: 'queued', startedAt: null } : {}), createdAt: now };
    const insert = this.shapedStatement('insert', values, '', (set) => (db) =>
      db.insert(r).values(set as typeof r.$inferInsert).onConflictDoNothing({ target: [r.userId, r.idempotencyKey] }).returning(),
    );
    const [created] = await insert(tx, withoutNulls(values));
    if (created) await addDailyUsage(this.adapter, tx, input.userId, now, created.model, { runs: 1, tokens: 0 });
    // Counted after the insert, this one included; throwing rolls the insert (and the turn's message) back.
    if (created && daily) await this.checkDaily(tx, input.userId, quota);
    if (created && mayQueue && created.status === 'queued' && (await this.queuedOf(tx, input.userId)) > options.maxQueued!) throw new QueuedRunLimitReached(options.maxQueued!);
    if (created) {
      // Last: the append holds the audit lock until the commit.
      await appendAuditIn(this.adapter, tx, {
        at: now,
        actor: input.userId,
        action: 'run.created',
        target: `run:${created.id}`,
        detail: { agent_type: input.agentType, mode: input.mode, working_dir: input.workingDir, conversation_id: input.conversationId },
      });
      return { run: created, created: true, ...(turn ? { turn } : {}) };
    }
    // Only a key collision skips the insert, and then the run holding the key is committed.
    const [existing] = await tx
      .select()
      .from(r)
      .where(and(eq(r.userId, input.userId), eq(r.idempotencyKey, input.idempotencyKey!)));
    // Thrown to roll back the user message stored above: a repeated request stores nothing.
    if (turn) throw new KeyTaken(existing!);
    return { run: existing!, created: false };
  }

  /** Past either daily quota, throws (the run just inserted is one of today's). */
  private async checkDaily(tx: Db, userId: string, quota: RunQuotaCheck): Promise<void> {
    const { runs, tokens } = await dailyUsageSince(this.t, tx, userId, quota.since);
    if (quota.maxRunsPerDay > 0 && runs > quota.maxRunsPerDay) throw new DailyRunQuotaReached(quota.maxRunsPerDay);
    if (quota.maxTokensPerDay > 0 && tokens >= quota.maxTokensPerDay) throw new DailyTokenQuotaReached(tokens, quota.maxTokensPerDay);
  }

  usedSince(userId: string, since: Date): Promise<{ runs: number; tokens: number }> {
    return this.adapter.run((db) => dailyUsageSince(this.t, db, userId, since));
  }

  async tokensSince(userId: string, since: Date): Promise<number> {
    return (await this.usedSince(userId, since)).tokens;
  }

  /** The user's runs executing now, on any replica: running, or waiting for an approval. */
  private async executingOf(db: Db, userId: string): Promise<number> {
    const [executing] = await this.statements.executingOf(db, { userId });
    return executing?.n ?? 0;
  }

  claimQueuedRun(id: string, userId: string, maxConcurrent: number, now: Date): Promise<ClaimOutcome> {
    const r = this.t.runs;
    return this.adapter.transaction(async (tx) => {
      if (maxConcurrent > 0) {
        await this.lockUser(tx, userId);
        if ((await this.executingOf(tx, userId)) >= maxConcurrent) return 'full';
      }
      const started = await tx
        .update(r)
        .set({ status: 'running', startedAt: now })
        .where(and(eq(r.id, id), eq(r.status, 'queued')))
        .returning({ id: r.id });
      return started.length > 0 ? 'started' : 'not_queued';
    });
  }

  private async queuedOf(db: Db, userId: string): Promise<number> {
    const r = this.t.runs;
    const [queued] = await db
      .select({ n: count() })
      .from(r)
      .where(and(eq(r.userId, userId), eq(r.status, 'queued')));
    return queued?.n ?? 0;
  }

  /**
   * Holds the user's lock until the transaction ends: on PostgreSQL an advisory lock (the rows
   * to count may not exist yet, so no row lock would do); SQLite runs one transaction at a time.
   */
  private async lockUser(tx: Db, userId: string): Promise<void> {
    if (this.adapter.dialect !== 'postgres') return;
    await tx.execute(sql`select pg_advisory_xact_lock(${QUEUED_RUNS_LOCK}, hashtext(${userId}))`);
  }

  findRun(id: string): Promise<RunRecord | undefined> {
    return this.adapter.run(async (db) => (await this.statements.findRun(db, { id }))[0]);
  }

  findRunByIdempotencyKey(userId: string, key: string, since: Date): Promise<RunRecord | undefined> {
    const r = this.t.runs;
    return this.adapter.run(
      async (db) =>
        (
          await db
            .select()
            .from(r)
            .where(and(eq(r.userId, userId), eq(r.idempotencyKey, key), gte(r.createdAt, since)))
        )[0],
    );
  }

  viewRun(id: string): Promise<RunView | undefined> {
    return this.adapter.run(async (db) => {
      const [row] = await this.viewById(db, { id });
      return row && toView(row);
    });
  }

  listRuns(userId: string, page: RunListPage): Promise<{ items: RunView[]; total: number }> {
    const r = this.t.runs;
    const matching = page.status ? and(eq(r.userId, userId), eq(r.status, page.status)) : eq(r.userId, userId);
    // The page's ids, sizes and total in one statement: on PostgreSQL two would run on two
    // connections, and a page read before a run was stored could come with a total counted after
    // it. Only a page past the end needs the count on its own.
    return this.adapter.run(async (db) => {
      const sizes = await db
        .select({ id: r.id, ...this.textSizes(), total: sql<number>`count(*) over ()`.mapWith(Number) })
        .from(r)
        .where(matching)
        .orderBy(desc(r.createdAt), desc(r.id))
        .limit(page.limit)
        .offset(page.offset);
      if (sizes.length === 0 && page.offset > 0) {
        const [total] = await db.select({ n: count() }).from(r).where(matching);
        return { items: [], total: total?.n ?? 0 };
      }
      if (sizes.length === 0) return { items: [], total: 0 };
      // Then the rows, each text inline only if the page's budget took it.
      const inline = inlineWithinPage(sizes);
      const ids = sizes.map((size) => size.id);
      const rows = await db
        .select(this.viewColumns((column) => (inline[column].length > 0 ? inArray(r.id, inline[column]) : sql`false`)))
        .from(r)
        .where(inArray(r.id, ids));
      const byId = new Map(rows.map((row) => [row.id, toView(row)]));
      // A run deleted between the two reads is left out.
      const items = ids.flatMap((id) => byId.get(id) ?? []);
      return { items, total: sizes[0]!.total };
    });
  }

  runTextSlices(runId: string, column: RunTextColumn): AsyncIterable<string> {
    return largeSlices(() => this.texts({ runId, column }));
  }

  eventSlices(runId: string, seq: number): AsyncIterable<string> {
    return largeSlices(() => this.texts({ runId, seq }));
  }

  /** Each text's size in bytes (null for a null text), read without the text. */
  private textSizes(): Record<`${RunTextColumn}Bytes`, SQL<number | null>> {
    const r = this.t.runs;
    return {
      promptBytes: sql<number | null>`octet_length(${r.prompt})`,
      responseBytes: sql<number | null>`octet_length(${r.response})`,
      errorBytes: sql<number | null>`octet_length(${r.error})`,
    };
  }

  /** A run's columns, each text only where `inline` says so (and never over INLINE_TEXT_BYTES), with every text's size. */
  private viewColumns(inline: (column: RunTextColumn) => SQL) {
    const { prompt, response, error, ...head } = getTableColumns(this.t.runs);
    const text = (column: Column, name: RunTextColumn) => sql<string | null>`case when ${inline(name)} and octet_length(${column}) <= ${INLINE_TEXT_BYTES} then ${column} end`;
    return { ...head, prompt: text(prompt, 'prompt'), response: text(response, 'response'), error: text(error, 'error'), ...this.textSizes() };
  }

  /** A large text read on the service's own connection (no other can open the database). */
  private async textHere(text: RunTextRef): Promise<Buffer | undefined> {
    const { runs: r, runEvents: e } = this.t;
    const [row] = await this.adapter.run((db) =>
      'seq' in text
        ? db
            .select({ text: e.data })
            .from(e)
            .where(and(eq(e.runId, text.runId), eq(e.seq, text.seq)))
        : db.select({ text: r[text.column] }).from(r).where(eq(r.id, text.runId)),
    );
    return row?.text === null || row?.text === undefined ? undefined : Buffer.from(row.text, 'utf8');
  }

  updateRun(id: string, changes: RunChanges, onlyIf?: readonly RunStatus[]): Promise<RunRecord | undefined> {
    return this.adapter.run((db) => this.update(db, id, changes, onlyIf));
  }

  appendActiveEvent(id: string, data: string, now: Date): Promise<RunEventRecord | undefined> {
    return this.adapter.transaction(async (tx) => {
      const [taken] = await this.statements.takeSeqWhileActive(tx, { id });
      return taken && this.insertEvent(tx, { runId: id, seq: taken.seq, data, createdAt: now });
    });
  }

  endRun(id: string, data: string, now: Date, ending: RunEnding, usage: RunUsage, audit?: NewAuditEntry): Promise<{ run: RunRecord; event: RunEventRecord } | undefined> {
    return this.outbox.transaction(async (tx, notice) => {
      const counters = { modelCalls: usage.model_calls, toolCalls: usage.tool_calls, inputTokens: usage.input_tokens, outputTokens: usage.output_tokens };
      const [run] = await this.statements.endWhileActive(tx, { id, ...ending, endedAt: now, ...counters });
      if (!run) return undefined;
      const tokens = usage.input_tokens + usage.output_tokens;
      // Counted on the day the run was created, as its run was.
      if (tokens > 0) await addDailyUsage(this.adapter, tx, run.userId, run.createdAt, run.model, { runs: 0, tokens });
      const stored = await this.stored(tx, run, data, now);
      await endedNotice(notice, run, now);
      // Last: the append holds the audit lock until the commit.
      if (audit) await appendAuditIn(this.adapter, tx, audit);
      return stored;
    });
  }

  eventTextAfter(id: string, afterSeq: number): Promise<number> {
    const e = this.t.runEvents;
    return this.adapter.run(async (db) => {
      const [row] = await db
        .select({ n: sql<number | string>`coalesce(sum(octet_length(${e.data})), 0)` })
        .from(e)
        .where(and(eq(e.runId, id), gt(e.seq, afterSeq)));
      // PostgreSQL's sum of integers is a bigint, which pg hands over as a string.
      return Number(row?.n ?? 0);
    });
  }

  eventsAfter(id: string, afterSeq: number, limit: number): Promise<RunEventRecord[]> {
    return this.adapter.run((db) => this.statements.eventsAfter(db, { runId: id, after: afterSeq, limit }));
  }

  async eventFramesAfter(id: string, afterSeq: number, limit: number, withIds: boolean): Promise<EventFrames | LargeEvent | undefined> {
    // Sizes first: the events joined below stay within INLINE_PAGE_BYTES, and a large one is read on its own.
    const sizes = await this.adapter.query<{ seq: number; bytes: number }>(eventSizesAfter, [id, afterSeq, limit]);
    if (sizes.length === 0) return undefined;
    if (sizes[0]!.bytes > INLINE_TEXT_BYTES) return { largeSeq: sizes[0]!.seq };
    let rows = 0;
    for (let total = 0; rows < sizes.length && sizes[rows]!.bytes <= INLINE_TEXT_BYTES; rows++) {
      total += sizes[rows]!.bytes;
      if (rows > 0 && total > INLINE_PAGE_BYTES) break;
    }
    // Events never change once stored, and seqs have no gaps: these are the rows measured.
    const [page] = await this.adapter.query<{ text: string | null; last_seq: number | null }>(withIds ? framesWithIds : framesWithoutIds, [id, afterSeq, rows]);
    if (!page?.text || page.last_seq === null) return undefined;
    return rows < sizes.length ? { text: page.text, lastSeq: page.last_seq, cut: true } : { text: page.text, lastSeq: page.last_seq };
  }

  async eventPagesAfter(id: string, afterSeq: number, limit: number): Promise<FrameBytes[]> {
    // Stored pages are about EVENT_PAGE_CHARS, unless one holds a large event: the pages stop before it.
    const sizes = await this.adapter.query<{ bytes: number }>(pageSizesAfter, [id, afterSeq, limit]);
    const large = sizes.findIndex((size) => size.bytes > INLINE_PAGE_BYTES);
    const count = large < 0 ? sizes.length : large;
    if (count === 0) return [];
    const pages = await this.adapter.query<{ first_seq: number; last_seq: number; frames: Buffer | string }>(pagesAfter, [id, afterSeq, count]);
    return pages.map((page) => {
      const bytes = typeof page.frames === 'string' ? Buffer.from(page.frames) : page.frames;
      if (page.first_seq > afterSeq) return { bytes, lastSeq: page.last_seq };
      // Each frame starts after the blank line ending the one before; data never holds a line break.
      const start = bytes.indexOf(`\nid: ${afterSeq + 1}\n`) + 1;
      return { bytes: bytes.subarray(start), lastSeq: page.last_seq };
    });
  }

  async renewLeases(owner: string, until: Date): Promise<void> {
    const r = this.t.runs;
    await this.adapter.run((db) =>
      db
        .update(r)
        .set({ leaseUntil: until })
        .where(and(eq(r.leaseOwner, owner), inArray(r.status, [...ACTIVE_RUN_STATUSES]))),
    );
  }

  interruptAbandonedRuns(expiredBefore: Date, now: Date, ending: { error: string; eventData: string }): Promise<string[]> {
    const { runs: r, approvals: a } = this.t;
    return this.outbox.transaction(async (tx, notice) => {
      const abandoned = await tx
        .select({ id: r.id })
        .from(r)
        .where(and(inArray(r.status, [...ACTIVE_RUN_STATUSES]), or(isNull(r.leaseUntil), lt(r.leaseUntil, expiredBefore))));
      const ended: string[] = [];
      for (const { id } of abandoned) {
        // The status condition makes a run that ended meanwhile keep its own ending.
        const done = await this.append(tx, id, ending.eventData, now, { status: 'interrupted', endedAt: now, error: ending.error, leaseOwner: null, leaseUntil: null }, ACTIVE_RUN_STATUSES);
        if (!done) continue;
        await endedNotice(notice, done.run, now);
        // Nobody is left to act on an answer: what the run was waiting for is denied with it.
        await tx
          .update(a)
          .set({ status: 'denied', message: ending.error, decidedAt: now })
          .where(and(eq(a.runId, id), eq(a.status, 'pending')));
        ended.push(id);
      }
      return ended;
    });
  }

  deleteRunsEndedBefore(cutoff: Date): Promise<number> {
    const r = this.t.runs;
    return this.adapter.transaction(async (tx) => {
      const gone = await tx
        .delete(r)
        .where(and(isNotNull(r.endedAt), lt(r.endedAt, cutoff)))
        .returning({ id: r.id });
      return gone.length;
    });
  }

  private async update(db: Db, id: string, changes: RunChanges, onlyIf?: readonly RunStatus[]): Promise<RunRecord | undefined> {
    const [row] = await this.runUpdate(changes, onlyIf, false)(db, { ...withoutNulls(changes), id });
    return row;
  }

  /** The UPDATE of `changes` on a run whose status is one of `onlyIf` (any when absent), optionally taking the next seq. */
  private runUpdate(changes: RunChanges, onlyIf: readonly RunStatus[] | undefined, takeSeq: boolean): PreparedStatement<RunRecord[]> {
    const r = this.t.runs;
    return this.shapedStatement('update', changes, `${onlyIf?.join(',') ?? '*'}|${takeSeq}`, (set) => {
      if (takeSeq) set.lastEventId = sql`${r.lastEventId} + 1`;
      // An empty SET is not SQL; re-setting the id changes nothing and still returns the row.
      if (Object.keys(set).length === 0) set.id = sql.placeholder('id');
      const id = eq(r.id, sql.placeholder('id'));
      const target = onlyIf ? and(id, inArray(r.status, [...onlyIf])) : id;
      return (db) => db.update(r).set(set).where(target).returning();
    });
  }

  /**
   * The statement of one shape, prepared on first use: `fields` become placeholders named after
   * them, except nulls, written into the SQL (a null would not pass a timestamp column's encoder).
   * Call it with the fields without their nulls (withoutNulls).
   */
  private shapedStatement(
    kind: string,
    fields: Record<string, unknown>,
    rest: string,
    build: (set: Record<string, unknown>) => (db: Db) => PreparableQuery<RunRecord[]>,
  ): PreparedStatement<RunRecord[]> {
    const keys = Object.keys(fields)
      .filter((key) => fields[key] !== undefined)
      .sort();
    const shape = `${kind}|${keys.map((key) => (fields[key] === null ? `${key}=null` : key)).join(',')}|${rest}`;
    let statement = this.shaped.get(shape);
    if (statement === undefined) {
      const set = Object.fromEntries(keys.map((key) => [key, fields[key] === null ? null : sql.placeholder(key)]));
      statement = this.adapter.prepared(`run_shape_${this.shaped.size}`, build(set));
      this.shaped.set(shape, statement);
    }
    return statement;
  }

  private async append(
    tx: Db,
    id: string,
    data: string,
    now: Date,
    changes: RunChanges,
    onlyIf?: readonly RunStatus[],
  ): Promise<{ run: RunRecord; event: RunEventRecord } | undefined> {
    const [run] = await this.takeSeq(tx, id, changes, onlyIf);
    return run && this.stored(tx, run, data, now);
  }

  /** Stores the event whose seq `run` (just updated) took; an ended long run gets its pages. */
  private async stored(tx: Db, run: RunRecord, data: string, now: Date): Promise<{ run: RunRecord; event: RunEventRecord }> {
    const event = await this.insertEvent(tx, { runId: run.id, seq: run.lastEventId, data, createdAt: now });
    if (!ACTIVE_RUN_STATUSES.includes(run.status) && run.lastEventId >= PAGED_RUN_MIN_EVENTS) await this.storePages(tx, run.id);
    return { run, event };
  }

  /** The event as stored: what was written, with nothing read back (a row handed back cost more than the insert). */
  private async insertEvent(tx: Db, event: RunEventRecord): Promise<RunEventRecord> {
    await this.statements.insertEvent(tx, { ...event });
    return event;
  }

  /**
   * An ended run's frames joined into pages of about EVENT_PAGE_CHARS, each ending with a whole
   * frame. They stop before its first event over INLINE_TEXT_BYTES: a replay reads that one on its
   * own and the rest row by row (eventFramesAfter), and joining it here would hold the event loop.
   */
  private async storePages(tx: Db, id: string): Promise<void> {
    const { runEvents: e, runEventPages: pages } = this.t;
    const [large] = await tx
      .select({ seq: min(e.seq) })
      .from(e)
      .where(and(eq(e.runId, id), gt(sql`octet_length(${e.data})`, INLINE_TEXT_BYTES)));
    const before = large?.seq ?? null;
    const page = { frames: '', firstSeq: 0, lastSeq: 0 };
    const flush = async (): Promise<void> => {
      await tx.insert(pages).values({ runId: id, ...page });
      page.frames = '';
    };
    let last = 0;
    let rows: { seq: number; data: string }[];
    do {
      // In slices, so a very long run is never held in memory as rows all at once.
      rows = await tx
        .select({ seq: e.seq, data: e.data })
        .from(e)
        .where(and(eq(e.runId, id), gt(e.seq, last), before === null ? undefined : lt(e.seq, before)))
        .orderBy(e.seq)
        .limit(PAGE_SOURCE_ROWS);
      for (const row of rows) {
        if (page.frames === '') page.firstSeq = row.seq;
        page.frames += `id: ${row.seq}\ndata: ${row.data}\n\n`;
        page.lastSeq = row.seq;
        if (page.frames.length >= EVENT_PAGE_CHARS) await flush();
      }
      last = rows.at(-1)?.seq ?? last;
    } while (rows.length === PAGE_SOURCE_ROWS);
    if (page.frames !== '') await flush();
  }

  /** Increments the run's last_event_id (and applies `changes`). */
  private takeSeq(tx: Db, id: string, changes: RunChanges, onlyIf?: readonly RunStatus[]): Promise<RunRecord[]> {
    return this.runUpdate(changes, onlyIf, true)(tx, { ...withoutNulls(changes), id });
  }
}

/** The webhooks' `run_ended` of a run just ended, stored with its end. */
function endedNotice(notice: NoticeWriter, run: RunRecord, at: Date): Promise<void> {
  return notice(run.userId, { event: 'run_ended', at, runId: run.id, status: run.status });
}

/** The fields with a value: the values of a shaped statement, whose nulls are in its SQL. */
function withoutNulls(fields: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined));
}

/**
 * A placeholder as a SET value: drizzle binds it through the column's encoder (a Date becomes what
 * the dialect stores), but its types take only plain values there. The encoders of text columns
 * pass null through; those of timestamps do not, so a timestamp bound this way is never null.
 */
const bound = <T>(name: string): T => sql.placeholder(name) as unknown as T;

/** Placeholders stand for what changes from call to call; everything else is fixed in the SQL. */
function hotStatements(adapter: DialectAdapter): {
  findRun: PreparedStatement<RunRecord[]>;
  eventsAfter: PreparedStatement<RunEventRecord[]>;
  takeSeqWhileActive: PreparedStatement<{ seq: number }[]>;
  endWhileActive: PreparedStatement<RunRecord[]>;
  insertEvent: PreparedStatement<unknown>;
  executingOf: PreparedStatement<{ n: number }[]>;
} {
  const { runs: r, runEvents: e } = adapter.tables;
  return {
    findRun: adapter.prepared('run_by_id', (db) => db.select().from(r).where(eq(r.id, sql.placeholder('id')))),
    eventsAfter: adapter.prepared('run_events_after', (db) =>
      db
        .select()
        .from(e)
        .where(and(eq(e.runId, sql.placeholder('runId')), gt(e.seq, sql.placeholder('after'))))
        .orderBy(e.seq)
        .limit(sql.placeholder('limit')),
    ),
    // Every event a run stores while it runs: only the seq taken comes back, not the run's row.
    takeSeqWhileActive: adapter.prepared('run_take_seq', (db) =>
      db
        .update(r)
        .set({ lastEventId: sql`${r.lastEventId} + 1` })
        .where(and(eq(r.id, sql.placeholder('id')), inArray(r.status, [...ACTIVE_RUN_STATUSES])))
        .returning({ seq: r.lastEventId }),
    ),
    // Every run ends here: the outcome, the lease released, the usage added, the final event's seq taken.
    endWhileActive: adapter.prepared('run_end', (db) =>
      db
        .update(r)
        .set({
          status: bound<RunStatus>('status'),
          response: bound<string | null>('response'),
          error: bound<string | null>('error'),
          endedAt: bound<Date>('endedAt'),
          leaseOwner: null,
          leaseUntil: null,
          modelCalls: sql`${r.modelCalls} + ${sql.placeholder('modelCalls')}`,
          toolCalls: sql`${r.toolCalls} + ${sql.placeholder('toolCalls')}`,
          inputTokens: sql`${r.inputTokens} + ${sql.placeholder('inputTokens')}`,
          outputTokens: sql`${r.outputTokens} + ${sql.placeholder('outputTokens')}`,
          lastEventId: sql`${r.lastEventId} + 1`,
        })
        .where(and(eq(r.id, sql.placeholder('id')), inArray(r.status, [...ACTIVE_RUN_STATUSES])))
        .returning(),
    ),
    // Every run's creation under a concurrency limit counts the user's executing runs.
    executingOf: adapter.prepared('runs_executing_of', (db) =>
      db
        .select({ n: count() })
        .from(r)
        .where(and(eq(r.userId, sql.placeholder('userId')), inArray(r.status, ['running', 'waiting_approval']))),
    ),
    insertEvent: adapter.prepared('run_event_insert', (db) =>
      db.insert(e).values({ runId: sql.placeholder('runId'), seq: sql.placeholder('seq'), data: sql.placeholder('data'), createdAt: sql.placeholder('createdAt') }),
    ),
  };
}

/** A row of viewColumns. */
type ViewRow = RunHead & Record<RunTextColumn, string | null> & Record<`${RunTextColumn}Bytes`, number | null>;

/** A run as read by viewColumns: a text left out but not null is a LargeText. */
function toView(row: ViewRow): RunView {
  const { promptBytes, responseBytes, errorBytes, prompt, response, error, ...head } = row;
  const text = (value: string | null, bytes: number | null) => value ?? (bytes === null ? null : { largeBytes: Number(bytes) });
  return { ...head, prompt: text(prompt, promptBytes) ?? '', response: text(response, responseBytes), error: text(error, errorBytes) };
}

/**
 * The runs whose texts a page reads inline, per column: in the page's order, while their total
 * stays within INLINE_PAGE_BYTES; each over INLINE_TEXT_BYTES is left out whatever the total.
 */
function inlineWithinPage(sizes: readonly ({ id: string } & Record<`${RunTextColumn}Bytes`, number | null>)[]): Record<RunTextColumn, string[]> {
  const inline: Record<RunTextColumn, string[]> = { prompt: [], response: [], error: [] };
  let total = 0;
  for (const size of sizes) {
    for (const column of ['prompt', 'response', 'error'] as const) {
      const bytes = Number(size[`${column}Bytes`] ?? 0);
      if (bytes > INLINE_TEXT_BYTES || total + bytes > INLINE_PAGE_BYTES) continue;
      total += bytes;
      inline[column].push(size.id);
    }
  }
  return inline;
}
