import type { RunResponse } from '@mada/protocol';
import type { ApiClient, Frames } from '../api/client.js';
import { ApiError, RequestCancelledError } from '../api/errors.js';
import { followRun } from '../stream/run-follower.js';
import type { LiveText } from '../ui/live-text.js';
import { TurnProgress } from '../ui/progress.js';
import type { Terminal } from '../ui/terminal.js';
import { follow, framesOf, type TurnEventHandlers } from './event-loop.js';
import type { ChatSession } from './session.js';
import { showAnswer, showFooter, unfinished } from './turn-end.js';

export interface TurnContext {
  client: ApiClient;
  terminal: Terminal;
  session: ChatSession;
  signal: AbortSignal;
  handlers?: TurnEventHandlers | undefined;
}

/** A 404 from a route the service does not have (older servers), as opposed to a missing conversation. */
function isMissingRoute(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 405 || (error.status === 404 && error.detail !== 'Conversation not found'));
}

/** The work's result, and the answer text it has shown so far (for showAnswer to finish). */
async function withProgress<T>(context: TurnContext, work: (progress: TurnProgress) => Promise<T>): Promise<{ result: T; live: LiveText | undefined }> {
  const progress = new TurnProgress(context.terminal, context.session.workingDir);
  progress.start();
  try {
    return { result: await work(progress), live: progress.live };
  } catch (error) {
    // What was being written ends its line before the failure is told.
    progress.live?.close();
    throw error;
  } finally {
    progress.stop();
  }
}

/** The session's chosen model, sent with each turn; none: the conversation's own. */
const modelOf = (session: ChatSession): { model?: string } => (session.model === undefined ? {} : { model: session.model });

/** The original service's path: stream a one-off run, buffer the reply, then store both messages with /save. */
async function agentStreamTurn(context: TurnContext, text: string): Promise<void> {
  const { client, session, terminal, signal } = context;
  const request = { agent_type: session.agentType, prompt: text, working_dir: session.workingDir, mode: session.mode, ...modelOf(session) };
  const { result: outcome, live } = await withProgress(context, async (progress) => follow(await client.streamAgent(request, signal), progress, context.handlers));
  if (outcome.end !== 'done') unfinished(terminal, outcome, live);
  showAnswer(terminal, outcome.answer, live);
  const saved = await client.saveMessages(session.conversationId, { user_content: text, assistant_content: outcome.answer }, signal);
  showFooter(terminal, saved.total_tokens, false);
}

/** The streamed turn: the service stores both messages and the conversation keeps its memory. */
async function turnStreamTurn(context: TurnContext, text: string): Promise<void> {
  const { client, session, terminal, signal } = context;
  const { result: outcome, live } = await withProgress(context, async (progress) => {
    let frames: Frames;
    try {
      frames = await client.streamTurn(session.conversationId, { content: text, mode: session.mode, ...modelOf(session) }, signal);
    } catch (error) {
      if (isMissingRoute(error)) return undefined;
      throw error;
    }
    return follow(frames, progress, context.handlers);
  });
  if (outcome === undefined) {
    session.transport = 'agent-stream';
    terminal.notice('This service has no streamed turns; using /agents/stream and saving each reply with /save.');
    return agentStreamTurn(context, text);
  }
  if (outcome.end !== 'done') unfinished(terminal, outcome, live);
  showAnswer(terminal, outcome.answer, live);
  showFooter(terminal, outcome.totalTokens, outcome.summarized);
}

/** Ctrl-C during a stored run: the run is stopped on the service, not merely left behind. */
export async function cancelQuietly(client: ApiClient, runId: string): Promise<void> {
  try {
    await client.cancelRun(runId);
  } catch (error) {
    // 409: it ended on its own meanwhile. Anything else: the service log has it; the chat goes on.
    if (!(error instanceof ApiError)) throw error;
  }
}

/**
 * The turn as a stored run: started with one POST, then its events followed, reattaching after a
 * dropped connection without losing or repeating a frame. Ctrl-C cancels the run.
 */
async function runTurnOverRuns(context: TurnContext, text: string): Promise<void> {
  const { client, session, terminal, signal } = context;
  let run: RunResponse;
  try {
    run = await client.startConversationRun(session.conversationId, { content: text, mode: session.mode, ...modelOf(session) }, signal);
  } catch (error) {
    if (!isMissingRoute(error)) throw error;
    // An older service: its streamed turns do the same, without reattaching.
    session.transport = 'turn-stream';
    return turnStreamTurn(context, text);
  }
  session.lastRunId = run.id;
  const reattaching = (): void => terminal.notice('The connection dropped; reattaching to the run…');
  let outcome;
  let live;
  try {
    ({ result: outcome, live } = await withProgress(context, (progress) =>
      follow(framesOf(followRun(client, run.id, { signal, onReattach: reattaching })), progress, context.handlers, run.id),
    ));
  } catch (error) {
    if (error instanceof RequestCancelledError) await cancelQuietly(client, run.id);
    throw error;
  }
  if (outcome.end !== 'done') unfinished(terminal, outcome, live);
  showAnswer(terminal, outcome.answer, live);
  showFooter(terminal, outcome.totalTokens, outcome.summarized);
}

/** One prompt, sent the way the session says; failures are thrown for the chat to show. */
export function runTurn(context: TurnContext, text: string): Promise<void> {
  switch (context.session.transport) {
    case 'runs':
      return runTurnOverRuns(context, text);
    case 'turn-stream':
      return turnStreamTurn(context, text);
    case 'agent-stream':
      return agentStreamTurn(context, text);
    case 'messages':
      return messagesTurn(context, text);
  }
}

/** Without streaming: one blocking call; only a spinner shows that something is happening. */
async function messagesTurn(context: TurnContext, text: string): Promise<void> {
  const { client, session, terminal, signal } = context;
  const { result: reply } = await withProgress(context, () => client.addMessage(session.conversationId, { content: text, mode: session.mode, ...modelOf(session) }, signal));
  showAnswer(terminal, reply.assistant_message.content);
  showFooter(terminal, reply.total_tokens, reply.summarized);
}
