import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ElicitResultSchema, type ClientCapabilities, type ElicitResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { describeCall, exactText, type ApprovalDecision } from '@mada/protocol';
import type { ApprovalRelay, ApprovalService } from '../../approvals/approval-service.js';
import { toApprovalResponse } from '../../approvals/approval-response.js';
import type { ApprovalRecord } from '../../db/approval-repository.js';
import type { Log } from '../../util/log.js';

export interface RelayContext {
  server: McpServer;
  /** The tool call the run belongs to: the question goes out on that call's response stream. */
  extra: RequestHandlerExtra<ServerRequest, ServerNotification>;
  userId: string;
  approvals: ApprovalService;
  log: Log;
}

/** As `POST /approvals/{id}` takes it. */
const MAX_MESSAGE_CHARS = 2000;
/**
 * The longest question put to a client. The call in it is model output, which a hostile file can
 * steer: it is shown whole or not at all, never cut, since what a cut hides (a removal after
 * thousands of spaces) is what would be approved. A longer one waits in the inbox, shown whole there.
 */
export const MAX_QUESTION_CHARS = 50_000;

const DECISIONS: readonly ApprovalDecision[] = ['approve', 'approve_always', 'deny'];

/** The form the client shows: the inbox's three answers and its optional message. */
const REQUESTED_SCHEMA = {
  type: 'object' as const,
  properties: {
    decision: {
      type: 'string' as const,
      title: 'Decision',
      description: 'approve this call; approve_always: also like calls in this working directory from now on; deny',
      enum: [...DECISIONS],
      default: 'approve',
    },
    message: { type: 'string' as const, title: 'Message for the agent (optional)', maxLength: MAX_MESSAGE_CHARS },
  },
  required: ['decision'],
};

/**
 * Form elicitation: an empty `elicitation` capability is the older spelling of form-only, and a
 * client that lists modes must list `form`.
 */
export function acceptsForms(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation;
  if (elicitation === undefined) return false;
  return elicitation.form !== undefined || elicitation.url === undefined;
}

/**
 * Asks the MCP client's user about each approval of the run (elicitation/create) when the client
 * said it can; undefined otherwise, and the approvals wait in the inbox alone.
 */
export function elicitationRelay(context: RelayContext): ApprovalRelay | undefined {
  if (!acceptsForms(context.server.server.getClientCapabilities())) return undefined;
  return (approval, settled) => void ask(context, approval, settled);
}

async function ask(context: RelayContext, approval: ApprovalRecord, settled: AbortSignal): Promise<void> {
  const { server, extra, userId, approvals, log } = context;
  const message = question(approval);
  if (message.length > MAX_QUESTION_CHARS) {
    log.info({ approval_id: approval.id, chars: message.length }, 'MCP elicitation not sent: the call is too long to show whole; the approval waits in the inbox');
    return;
  }
  try {
    const result = await server.server.request(
      { method: 'elicitation/create', params: { message, requestedSchema: REQUESTED_SCHEMA } },
      ElicitResultSchema,
      // The SDK's default gives up after a minute; the approval itself waits until it expires.
      { relatedRequestId: extra.requestId, signal: settled, timeout: Math.max(1000, approval.expiresAt.getTime() - Date.now()) },
    );
    if (settled.aborted) return;
    const answer = answerOf(result);
    await approvals.decide(approval.id, userId, answer.decision, answer.message);
  } catch (error) {
    // Answered in the inbox first, expired, or the run stopped: nothing left to answer. Otherwise
    // (the client failed the request) the approval still waits in the inbox.
    if (!settled.aborted) log.debug({ approval_id: approval.id, err: error }, 'MCP elicitation got no answer; the approval waits in the inbox');
  }
}

/**
 * The call exactly as the inbox and the `mada` client show it (describeCall of the same
 * ApprovalResponse the routes send): controls drawn and invisible or reordering characters named,
 * so that a path reordered by U+202E cannot pass for another. The reason can quote a path the
 * model chose, so it is shown the same way.
 */
function question(approval: ApprovalRecord): string {
  const call = describeCall(toApprovalResponse(approval));
  // A harmless first line can sit above a removal hundreds of blank lines down, out of the
  // client's sight: a call of several lines says how many, before it starts.
  const lines = call.split('\n').length;
  const label = lines === 1 ? 'Call' : `Call (${lines} lines: read to the end before you answer)`;
  return `A mada agent asks to call ${approval.tool}.\nWhy it asks: ${exactText(approval.reason)}\n${label}: ${call}`;
}

/**
 * Accept is approve, or the decision it carries; declining or dismissing the question, or an
 * answer that is none of the three, denies the call.
 */
export function answerOf(result: ElicitResult): { decision: ApprovalDecision; message: string | undefined } {
  if (result.action !== 'accept') return { decision: 'deny', message: undefined };
  const content = result.content ?? {};
  const decision = content.decision === undefined ? 'approve' : (DECISIONS.find((known) => known === content.decision) ?? 'deny');
  const message = typeof content.message === 'string' && content.message.trim() !== '' ? content.message.slice(0, MAX_MESSAGE_CHARS).toWellFormed() : undefined;
  return { decision, message };
}
