import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRepository, NewApproval } from '../../src/db/approval-repository.js';
import type { RunRepository } from '../../src/db/run-repository.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';

const T0 = new Date('2026-02-01T10:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);
const ENDING = { error: 'Run interrupted: the service stopped', eventData: '{"event":"error","error_message":"Run interrupted: the service stopped"}' };

describe.each(DIALECTS)('approval repository on %s', (dialect) => {
  let db: TestDatabase;
  let runs: RunRepository;
  let approvals: ApprovalRepository;

  beforeEach(async () => {
    db = await createTestDatabase(dialect);
    runs = db.repository.runs;
    approvals = db.repository.approvals;
  });
  afterEach(async () => db.drop());

  const newRun = async (userId = 'alice') => {
    const { run } = await runs.createRun(
      { id: randomUUID(), userId, agentType: 'task', mode: 'default', prompt: 'p', workingDir: '/srv/app', conversationId: null, status: 'running', now: T0, idempotencyKey: null, requestHash: null, leaseOwner: 'a', leaseUntil: later(1000) },
      { idempotentSince: T0 },
    );
    return run;
  };
  const ask = (runId: string, userId = 'alice'): NewApproval => ({
    id: randomUUID(),
    runId,
    userId,
    tool: 'bash',
    args: '{"command":"rm a"}',
    reason: 'approval rule bash "rm" (ask)',
    workingDir: '/srv/app',
    grantMatch: '["rm"]',
    createdAt: T0,
    expiresAt: later(600_000),
  });

  it('stores a pending approval and lists only its user\'s, by status', async () => {
    const run = await newRun();
    const stored = await approvals.createApproval(ask(run.id));
    expect(stored).toMatchObject({ status: 'pending', decidedAt: null, message: null, createdAt: T0 });
    await approvals.createApproval(ask((await newRun('bob')).id, 'bob'));
    expect((await approvals.listApprovals('alice', 'pending')).items.map((a) => a.id)).toEqual([stored.id]);
    expect((await approvals.listApprovals('alice', 'approved')).total).toBe(0);
  });

  it('decides an approval once: the second answer finds it decided', async () => {
    const approval = await approvals.createApproval(ask((await newRun()).id));
    const [first, second] = await Promise.all([
      approvals.decideApproval(approval.id, { status: 'approved', message: null, now: later(5) }),
      approvals.decideApproval(approval.id, { status: 'denied', message: 'no', now: later(5) }),
    ]);
    expect([first, second].filter((d) => d !== undefined)).toHaveLength(1);
  });

  it("denies a run's pending approvals when the run is interrupted after a restart", async () => {
    const run = await newRun();
    const approval = await approvals.createApproval(ask(run.id));
    await runs.updateRun(run.id, { status: 'waiting_approval' });
    expect(await runs.interruptAbandonedRuns(later(365 * 86_400_000), later(10), ENDING)).toEqual([run.id]);
    expect(await approvals.findApproval(approval.id)).toMatchObject({ status: 'denied', message: ENDING.error, decidedAt: later(10) });
    expect((await runs.findRun(run.id))?.status).toBe('interrupted');
  });

  it('keeps approve_always grants per user, working directory and tool', async () => {
    await approvals.addGrant({ userId: 'alice', workingDir: '/srv/app', tool: 'bash', match: 'rm' }, T0);
    await approvals.addGrant({ userId: 'alice', workingDir: '/srv/app', tool: 'bash', match: 'rm' }, T0);
    expect(await approvals.grantedMatches('alice', '/srv/app', 'bash')).toEqual(['rm']);
    expect(await approvals.grantedMatches('alice', '/srv/other', 'bash')).toEqual([]);
    expect(await approvals.grantedMatches('bob', '/srv/app', 'bash')).toEqual([]);
  });

  it("asks and grants for an MCP tool whose name is as long as a tool name may be (64 characters)", async () => {
    const tool = `mcp__${'s'.repeat(20)}__${'t'.repeat(37)}`;
    expect(tool).toHaveLength(64);
    const stored = await approvals.createApproval({ ...ask((await newRun()).id), tool, grantMatch: '' });
    expect(stored.tool).toBe(tool);
    await approvals.addGrant({ userId: 'alice', workingDir: '/srv/app', tool, match: '' }, T0);
    expect(await approvals.grantedMatches('alice', '/srv/app', tool)).toEqual(['']);
  });
});
