import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { ElicitResultSchema, type ClientCapabilities, type ElicitResult, type ServerNotification, type ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalDecision } from '@mada/protocol';
import type { ApprovalRelay, ApprovalService } from '../../approvals/approval-service.js';
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
/** The arguments as shown in the question: model output, shown as the inbox shows it, but bounded. */
const MAX_ARGS_CHARS = 2000;

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
  try {
    const result = await server.server.request(
      { method: 'elicitation/create', params: { message: question(approval), requestedSchema: REQUESTED_SCHEMA } },
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

function question(approval: ApprovalRecord): string {
  const args = approval.args.length <= MAX_ARGS_CHARS ? approval.args : `${approval.args.slice(0, MAX_ARGS_CHARS).toWellFormed()}…`;
  return `A mada agent asks to call ${approval.tool}.\nWhy it asks: ${approval.reason}\nArguments: ${args}`;
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
