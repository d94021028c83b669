import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConversationRepository } from '../../src/db/repository.js';
import type { NewApproval } from '../../src/db/approval-repository.js';
import type { RunRecord } from '../../src/db/run-repository.js';
import type { WebhookRecord } from '../../src/db/webhook-repository.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';
import { until } from '../support/until.js';

/**
 * TEAMS.md section 13, issue 34: an event's deliveries are written by the change that causes it,
 * in its transaction. Nothing runs here after the repository's call returns (no service, no
 * callback), so a delivery found afterwards was committed with the run's end or the approval.
 */

const T0 = new Date('2026-02-01T10:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const NO_USAGE = { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 };
const ENDING = { error: 'Run interrupted: the service stopped', eventData: '{"event":"error","error_message":"Run interrupted: the service stopped"}' };
type Json = Record<string, unknown>;

describe.each(DIALECTS)('webhook deliveries stored with their events on %s', (dialect) => {
  let db: TestDatabase;
  let repo: ConversationRepository;
  let wakes: number;

  beforeEach(async () => {
    db = await createTestDatabase(dialect);
    repo = db.repository;
    wakes = 0;
    repo.webhooks.onDeliveriesStored(() => wakes++);
  });
  afterEach(async () => db.drop());

  const hook = (userId: string, events: WebhookRecord['events']) =>
    repo.webhooks.createWebhook({ id: randomUUID(), userId, url: 'https://hooks.example.com/h', events, secret: 'a-secret-of-sixteen+', createdAt: T0 }, 20);
  const newRun = async (userId = 'alice', leaseUntil = later(60_000)): Promise<RunRecord> =>
    (
      await repo.runs.createRun(
        { id: randomUUID(), userId, agentType: 'task', mode: 'default', prompt: 'p', workingDir: '/srv/app', conversationId: null, status: 'running', now: T0, idempotencyKey: null, requestHash: null, leaseOwner: 'a', leaseUntil },
        { idempotentSince: T0 },
      )
    ).run;
  const bodies = async (webhook: WebhookRecord): Promise<Json[]> => (await repo.webhooks.listDeliveries(webhook.id, 100)).map((d) => JSON.parse(d.body) as Json);
  const ask = (run: RunRecord): NewApproval => ({
    id: randomUUID(),
    runId: run.id,
    userId: run.userId,
    tool: 'bash',
    args: '{"command":"rm a"}',
    reason: 'approval rule bash "rm" (ask)',
    workingDir: '/srv/app',
    grantMatch: '["rm"]',
    createdAt: later(5),
    expiresAt: later(600_000),
  });

  it("stores a run's run_ended deliveries with its end, for its owner's subscribed webhooks only, and once", async () => {
    const ended = await hook('alice', ['run_ended']);
    const both = await hook('alice', ['approval_requested', 'run_ended']);
    const asks = await hook('alice', ['approval_requested']);
    const bobs = await hook('bob', ['run_ended']);
    const run = await newRun();
    expect(await repo.runs.endRun(run.id, '{"event":"done"}', later(10), { status: 'succeeded', response: 'ok', error: null }, NO_USAGE)).toBeDefined();
    const expected = { event: 'run_ended', at: later(10).toISOString(), run_id: run.id, status: 'succeeded' };
    expect(await bodies(ended)).toEqual([expected]);
    expect(await bodies(both)).toEqual([expected]);
    expect(await bodies(asks)).toEqual([]);
    expect(await bodies(bobs)).toEqual([]);
    const [delivery] = await repo.webhooks.listDeliveries(ended.id, 10);
    expect(delivery).toMatchObject({ event: 'run_ended', status: 'pending', attempts: 0, nextAttemptAt: later(10) });
    expect(wakes).toBe(1);
    // A second end changes nothing: no second delivery, no wake-up.
    expect(await repo.runs.endRun(run.id, '{"event":"done"}', later(20), { status: 'failed', response: null, error: 'x' }, NO_USAGE)).toBeUndefined();
    expect(await bodies(ended)).toHaveLength(1);
    expect(wakes).toBe(1);
    // A run of a user without webhooks stores none and wakes nobody.
    await repo.runs.endRun((await newRun('carol')).id, '{"event":"done"}', later(30), { status: 'succeeded', response: 'ok', error: null }, NO_USAGE);
    expect(wakes).toBe(1);
  });

  it('stores the run_ended of a cancelled run with its cancellation and its audit entry', async () => {
    const ended = await hook('alice', ['run_ended']);
    const run = await newRun();
    const audit = { at: later(10), actor: 'alice', action: 'run.cancelled' as const, target: `run:${run.id}`, detail: { user: 'alice' } };
    await repo.runs.endRun(run.id, '{"event":"error"}', later(10), { status: 'cancelled', response: null, error: 'Run cancelled' }, NO_USAGE, audit);
    expect(await bodies(ended)).toEqual([{ event: 'run_ended', at: later(10).toISOString(), run_id: run.id, status: 'cancelled' }]);
  });

  it('stores the run_ended of each run interrupted after its service stopped, with the interruption', async () => {
    const ended = await hook('alice', ['run_ended']);
    const dead = await newRun('alice', later(1000));
    const alive = await newRun('alice', later(3_600_000));
    const waiting = await newRun('alice', later(1000));
    await repo.approvals.createApproval(ask(waiting));
    expect(await repo.runs.interruptAbandonedRuns(later(60_000), later(60_000), ENDING)).toEqual(expect.arrayContaining([dead.id, waiting.id]));
    const stored = await bodies(ended);
    expect(stored).toHaveLength(2);
    expect(stored).toEqual(
      expect.arrayContaining([dead.id, waiting.id].map((id) => ({ event: 'run_ended', at: later(60_000).toISOString(), run_id: id, status: 'interrupted' }))),
    );
    expect(stored.some((body) => body.run_id === alive.id)).toBe(false);
  });

  it('stores the approval_requested deliveries with the approval', async () => {
    const asks = await hook('alice', ['approval_requested']);
    const ended = await hook('alice', ['run_ended']);
    const run = await newRun();
    const approval = await repo.approvals.createApproval(ask(run));
    expect(await bodies(asks)).toEqual([{ event: 'approval_requested', at: later(5).toISOString(), run_id: run.id, approval_id: approval.id, tool: 'bash' }]);
    expect(await bodies(ended)).toEqual([]);
    expect(wakes).toBe(1);
    expect((await repo.runs.findRun(run.id))?.status).toBe('waiting_approval');
  });

  it.runIf(dialect === 'postgres')("ends a run while its owner's webhook is being deleted, storing no delivery for it", async () => {
    const doomed = await hook('alice', ['run_ended']);
    const kept = await hook('alice', ['run_ended']);
    const run = await newRun();
    const other = new pg.Client({ connectionString: db.url });
    await other.connect();
    try {
      // The deletion holds the webhook's row until it commits; the run's end comes meanwhile.
      await other.query('begin');
      await other.query('delete from webhooks where id = $1', [doomed.id]);
      const ending = repo.runs.endRun(run.id, '{"event":"done"}', later(10), { status: 'succeeded', response: 'ok', error: null }, NO_USAGE);
      await until(
        async () => (await other.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()`)).rows[0]!.n,
        (n) => n > 0,
        'the run end to wait for the deletion',
      );
      await other.query('commit');
      expect((await ending)?.run.status).toBe('succeeded');
    } finally {
      await other.end();
    }
    expect(await bodies(kept)).toHaveLength(1);
    expect(await repo.webhooks.listDeliveries(doomed.id, 10)).toEqual([]);
  });
});
