import type { ApprovalDecision, ApprovalResponse } from '@mada/protocol';
import { describeCall } from '../chat/approval-prompt.js';
import { resolveSettings } from '../config/resolve.js';
import { EXIT_OK } from '../errors.js';
import { safeText } from '../ui/safe-text.js';
import { uniqueShortIds, when } from '../ui/table.js';
import type { Terminal } from '../ui/terminal.js';
import { resolveApprovalId } from './id-prefix.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export interface ApprovalsFlags extends ServiceFlags {
  json?: boolean;
}

export interface DecideFlags extends ServiceFlags {
  always?: boolean;
}

/** `mada approvals`: what the caller's runs are waiting for, newest first. */
export async function approvalsCommand(flags: ApprovalsFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const list = await clientFor(values).listApprovals('pending');
  if (flags.json) {
    terminal.printJson(list);
    return EXIT_OK;
  }
  if (list.approvals.length === 0) {
    terminal.print('No approvals waiting.');
    return EXIT_OK;
  }
  // Prefixes as short as the list allows (8 characters at least), as the other lists show ids:
  // `mada approve` and `mada deny` take them back as they are.
  const ids = uniqueShortIds(list.approvals.map((approval) => approval.id));
  const runs = uniqueShortIds(list.approvals.map((approval) => approval.run_id));
  list.approvals.forEach((approval, index) => {
    terminal.print(`${terminal.style('bold', ids[index]!)}  ${describeCall(approval)}`);
    terminal.print(terminal.style('dim', `  run ${runs[index]!} · ${safeText(approval.reason)} · expires ${when(approval.expires_at)}`));
  });
  terminal.print(terminal.style('dim', `${list.total} waiting · answer with: mada approve <id> [--always] or mada deny <id> [message]`));
  return EXIT_OK;
}

async function decide(id: string, decision: ApprovalDecision, message: string | undefined, flags: ServiceFlags, terminal: Terminal): Promise<number> {
  const { values } = resolveSettings(apiFlag(flags));
  const client = clientFor(values);
  const approvalId = await resolveApprovalId(client, id);
  const decided: ApprovalResponse = await client.decideApproval(approvalId, { decision, ...(message ? { message } : {}) });
  terminal.print(`${decided.status === 'approved' ? 'Approved' : 'Denied'}: ${describeCall(decided)}`);
  return EXIT_OK;
}

/** `mada approve <id>`: the waiting run goes on and runs the call (`--always`: and stops asking for it here). */
export function approveCommand(id: string, flags: DecideFlags, terminal: Terminal): Promise<number> {
  return decide(id, flags.always ? 'approve_always' : 'approve', undefined, flags, terminal);
}

/** `mada deny <id> [message]`: the agent reads `Denied by the user: <message>` instead of a result. */
export function denyCommand(id: string, words: string[], flags: ServiceFlags, terminal: Terminal): Promise<number> {
  return decide(id, 'deny', words.join(' ').trim() || undefined, flags, terminal);
}
