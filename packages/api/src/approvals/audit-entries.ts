import { createHash } from 'node:crypto';
import type { ApprovalDecision } from '@mada/protocol';
import type { ApprovalRecord } from '../db/approval-repository.js';
import { SYSTEM_ACTOR, type AuditDetail, type NewAuditEntry } from '../db/audit-repository.js';

/**
 * Longest command an entry keeps whole: twice the 8 KiB the command policy takes, so every
 * `bash` command an approver was shown is kept as shown. A cut hides what comes after it, and a
 * model steered by a hostile file puts the removal there, after thousands of spaces: a longer
 * command (an MCP tool's `command` argument) is kept as its start, its length and its SHA-256,
 * which name the whole of it.
 */
const MAX_SHOWN = 16_384;

/**
 * What the approver was shown of a call: its command (bash) or the path it writes, never the
 * contents a write carries. The arguments are the service's own JSON, stored with the approval.
 */
function shown(record: ApprovalRecord): AuditDetail {
  let args: unknown;
  try {
    args = JSON.parse(record.args);
  } catch {
    return {};
  }
  if (typeof args !== 'object' || args === null) return {};
  const { command, file_path: filePath } = args as { command?: unknown; file_path?: unknown };
  if (typeof command === 'string') return command.length <= MAX_SHOWN ? { command } : longCommand(command);
  return typeof filePath === 'string' ? { path: filePath } : {};
}

function longCommand(command: string): AuditDetail {
  return {
    command: `${command.slice(0, MAX_SHOWN).toWellFormed()}…`,
    command_chars: command.length,
    command_sha256: createHash('sha256').update(command, 'utf8').digest('hex'),
  };
}

const base = (record: ApprovalRecord) => ({ target: `approval:${record.id}`, detail: { run: record.runId, tool: record.tool, ...shown(record) } });

/** `approval.decided`: the owner's answer. */
export const decidedEntry = (userId: string, decision: ApprovalDecision, at: Date) => (record: ApprovalRecord): NewAuditEntry => {
  const { target, detail } = base(record);
  return { at, actor: userId, action: 'approval.decided', target, detail: { ...detail, decision } };
};

/** `approval.expired`: nobody answered in time; the service denied it. */
export const expiredEntry = (at: Date) => (record: ApprovalRecord): NewAuditEntry => ({ at, actor: SYSTEM_ACTOR, action: 'approval.expired', ...base(record) });

/** `rule.added`: an approve_always answer's grant, one per rule match it covers. */
export const ruleEntry = (record: ApprovalRecord, match: string, at: Date): NewAuditEntry => ({
  at,
  actor: record.userId,
  action: 'rule.added',
  target: `approval:${record.id}`,
  detail: { tool: record.tool, working_dir: record.workingDir, match },
});
