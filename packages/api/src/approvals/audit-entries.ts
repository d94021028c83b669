import type { ApprovalDecision } from '@mada/protocol';
import type { ApprovalRecord } from '../db/approval-repository.js';
import { SYSTEM_ACTOR, type AuditDetail, type NewAuditEntry } from '../db/audit-repository.js';

/** Longest command an entry keeps: what the approver was shown, not whatever an agent wrote. */
const MAX_SHOWN = 4096;

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
  if (typeof command === 'string') return { command: command.length > MAX_SHOWN ? `${command.slice(0, MAX_SHOWN)}…` : command };
  return typeof filePath === 'string' ? { path: filePath } : {};
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
