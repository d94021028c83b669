import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, RequestId, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { AGENT_TYPES, PERMISSION_MODES, type AgentEvent, type AgentType } from '@mada/protocol';
import { z } from 'zod';
import { AGENT_CATALOGUE } from '../../agents/catalogue.js';
import type { AgentEngine } from '../../agents/engine.js';
import type { ApprovalService } from '../../approvals/approval-service.js';
import type { RunRecord } from '../../db/run-repository.js';
import { asDatabaseUnavailable } from '../../db/unavailable.js';
import { DomainError } from '../../errors.js';
import { agentJob } from '../../runs/agent-job.js';
import type { RunJob, RunService } from '../../runs/run-service.js';
import type { AddressFilter } from '../../util/address-hiding.js';
import { loggableError } from '../../util/loggable-error.js';
import type { Log } from '../../util/log.js';
import { assertMessageFits, type MessageLimits } from '../message-limit.js';
import { elicitationRelay } from './elicitation.js';

/** What each tool takes: the fields of `POST /runs` that make sense for a caller that is an agent. */
export const McpRunArguments = z.object({
  prompt: z.string().min(1).describe('What the agent should find out or do, in full: it sees nothing of your conversation.'),
  working_dir: z
    .string()
    .max(1024)
    .optional()
    .describe("The directory the agent works in, relative to your workspace on the mada service (default: the workspace's root)."),
  mode: z
    .enum(PERMISSION_MODES)
    .optional()
    .describe('How tool calls are approved: default (the approval rules ask), plan (read-only), auto_accept (file edits run without asking).'),
  model: z.string().min(1).max(255).optional().describe("One of the service's models (GET /models); absent: its default."),
});
export type McpRunArguments = z.infer<typeof McpRunArguments>;

export interface RunToolDeps {
  engine: AgentEngine;
  runs: RunService;
  approvals: ApprovalService;
  messageLimits: MessageLimits;
  /** What error texts may show of internal addresses. */
  filter: AddressFilter;
  log: Log;
}

/** One MCP session's side of a call: whose runs they are, and how a closed HTTP request reaches them. */
export interface CallOwner {
  userId: string;
  /** Cancels the call with this JSON-RPC id; the route calls it when the request's connection closes first. */
  inflight: Map<RequestId, () => void>;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

const TOOL_TEXT: Record<AgentType, string> = {
  explore: `${AGENT_CATALOGUE.explore.description} Answers with what it found.`,
  plan: `${AGENT_CATALOGUE.plan.description} Answers with the plan.`,
  task: `${AGENT_CATALOGUE.task.description} Answers with its report of what it did.`,
};
const RUN_NOTE = ' Runs in a sandbox on the mada service, on its local models, and is stored there as a run of yours.';

/** Registers `explore`, `plan` and `task` on a session's server. */
export function registerRunTools(server: McpServer, owner: CallOwner, deps: RunToolDeps): void {
  for (const agentType of AGENT_TYPES) {
    server.registerTool(
      agentType,
      {
        description: TOOL_TEXT[agentType] + RUN_NOTE,
        inputSchema: McpRunArguments.shape,
        annotations: { readOnlyHint: agentType !== 'task', destructiveHint: agentType === 'task', openWorldHint: agentType === 'task' },
      },
      (args, extra) => callRunTool(agentType, args, extra, server, owner, deps),
    );
  }
}

async function callRunTool(agentType: AgentType, args: McpRunArguments, extra: Extra, server: McpServer, owner: CallOwner, deps: RunToolDeps): Promise<CallToolResult> {
  let run: RunRecord;
  try {
    run = await startRun(agentType, args, extra, server, owner, deps);
  } catch (error) {
    return refused(error, deps);
  }
  const cancel = (): void => deps.runs.abandon(run.id);
  extra.signal.addEventListener('abort', cancel, { once: true });
  owner.inflight.set(extra.requestId, cancel);
  // Cancelled before the listener was there (the client gave up while the run was stored).
  if (extra.signal.aborted) cancel();
  try {
    const ended = await deps.runs.finished(run.id);
    const _meta = { run_id: run.id };
    if (ended.status === 'succeeded') return { content: [{ type: 'text', text: ended.response ?? '' }], _meta };
    return { isError: true, content: [{ type: 'text', text: deps.filter(ended.error ?? `Run ${ended.status}`) }], _meta };
  } finally {
    extra.signal.removeEventListener('abort', cancel);
    owner.inflight.delete(extra.requestId);
  }
}

/** Checks the call as `POST /runs` checks its body, then stores the run; throws the same errors. */
async function startRun(agentType: AgentType, args: McpRunArguments, extra: Extra, server: McpServer, owner: CallOwner, deps: RunToolDeps): Promise<RunRecord> {
  const { engine, runs, approvals } = deps;
  const { userId } = owner;
  await assertMessageFits(args.prompt, deps.messageLimits);
  const model = engine.model(args.model);
  const workspace = await runs.workspaceOf(userId);
  // Relative to the caller's workspace, as the tools' description says: the service's start
  // directory is no place a remote agent can know or name.
  const workingDir = engine.workingDirectory(args.working_dir ?? '.', workspace, workspace.roots[0]);
  const relay = elicitationRelay({ server, extra, userId, approvals, log: deps.log });
  const progress = progressReporter(extra);
  const { run } = await runs.start(
    { userId, agentType, prompt: args.prompt, workingDir, workspace, mode: args.mode ?? 'default', model },
    // The run waits for every ask: the client's user answers it (elicitation) or the inbox does.
    (stored) => reporting(agentJob(engine, stored, true, approvals.gates(stored, 'wait', relay)), progress),
  );
  return run;
}

/** A refusal is the tool's error, in the words the API would answer with; anything else is logged, not shown. */
function refused(error: unknown, deps: RunToolDeps): CallToolResult {
  const unavailable = asDatabaseUnavailable(error);
  let text: string;
  if (error instanceof DomainError) text = deps.filter(error.detail);
  else if (unavailable) text = unavailable.message;
  else {
    deps.log.error({ err: loggableError(error) }, 'MCP tool call failed');
    text = 'Internal Server Error';
  }
  return { isError: true, content: [{ type: 'text', text }] };
}

/** The run's job, with every event it emits (its gate's too) also told to `progress`. */
function reporting(job: RunJob, progress: ((frame: AgentEvent) => void) | undefined): RunJob {
  if (progress === undefined) return job;
  const tap =
    (emit: (frame: AgentEvent) => void) =>
    (frame: AgentEvent): void => {
      emit(frame);
      progress(frame);
    };
  const { gate } = job;
  return {
    ...(gate ? { gate: (emit) => gate(tap(emit)) } : {}),
    execute: (context) => job.execute({ ...context, emit: tap(context.emit) }),
  };
}

/** Progress messages are cut here: the client shows them on a line, the run's events keep them whole. */
const MAX_PROGRESS_CHARS = 300;

/** Sends `notifications/progress` for the run's steps when the client asked for progress (a progressToken). */
function progressReporter(extra: Extra): ((frame: AgentEvent) => void) | undefined {
  const token = extra._meta?.progressToken;
  if (token === undefined) return undefined;
  let progress = 0;
  return (frame) => {
    const message = progressMessage(frame);
    if (message === undefined) return;
    progress += 1;
    // A client gone meanwhile is the cancel path's business, not this one's.
    extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress, message } }).catch(() => undefined);
  };
}

/** A line per step; pieces of the answer are not steps (the answer comes whole, as the result). */
export function progressMessage(frame: AgentEvent): string | undefined {
  switch (frame.event) {
    case 'tool_start':
      return cut(`Calling ${frame.tool}`);
    case 'tool_done':
      return cut(`${frame.tool}: ${frame.outcome ?? 'done'}`);
    case 'thinking':
      return cut(frame.message);
    case 'approval_requested':
      return cut(`Waiting for approval of ${frame.tool}`);
    case 'approval_resolved':
      return `Approval ${frame.decision}`;
    default:
      return undefined;
  }
}

const cut = (text: string): string => (text.length <= MAX_PROGRESS_CHARS ? text : `${text.slice(0, MAX_PROGRESS_CHARS - 1).toWellFormed()}…`);
