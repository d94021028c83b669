import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decidedEntry } from '../../src/approvals/audit-entries.js';
import type { ApprovalRecord } from '../../src/db/approval-repository.js';

const AT = new Date('2026-03-01T12:00:00.000Z');

const approval = (tool: string, args: Record<string, unknown>): ApprovalRecord => ({
  id: 'a1',
  runId: 'r1',
  userId: 'bob',
  tool,
  args: JSON.stringify(args),
  reason: 'asks',
  status: 'pending',
  workingDir: '/work',
  grantMatch: '[]',
  createdAt: AT,
  expiresAt: AT,
  decidedAt: null,
  message: null,
});

describe('approval.decided entries', () => {
  it('keep a command longer than they show as its start, its length and the SHA-256 of the whole', () => {
    const command = `${'x'.repeat(20_000)} && rm -rf .`;
    const { detail } = decidedEntry('bob', 'approve', AT)(approval('mcp__ops__shell', { command }));
    expect(detail).toMatchObject({ tool: 'mcp__ops__shell', decision: 'approve', command_chars: command.length });
    expect(detail.command_sha256).toBe(createHash('sha256').update(command).digest('hex'));
    expect(String(detail.command)).toMatch(/^x+…$/);
  });

  it('keep a command within the limit whole, with nothing beside it', () => {
    const command = `echo hi${' '.repeat(8000)}&& rm notes.txt`;
    const { detail } = decidedEntry('bob', 'approve', AT)(approval('bash', { command }));
    expect(detail).toEqual({ run: 'r1', tool: 'bash', decision: 'approve', command });
  });
});
