import type { ApiClient, Frames } from '../api/client.js';
import { ApiError } from '../api/errors.js';
import { CliError } from '../errors.js';
import { toTurnEvent } from '../stream/turn-events.js';
import { renderAnswer } from '../ui/markdown.js';
import { TurnProgress } from '../ui/progress.js';
import type { Terminal } from '../ui/terminal.js';
import type { ChatSession } from './session.js';

export interface TurnContext {
  client: ApiClient;
  terminal: Terminal;
  session: ChatSession;
  signal: AbortSignal;
}

type StreamEnd =
  | { end: 'done'; answer: string; totalTokens?: number | undefined; summarized?: boolean | undefined }
  | { end: 'error'; answer: string; message: string }
  | { end: 'closed'; answer: string };

/** Reads frames until `done` or `error`, showing progress; leaving the loop closes the connection. */
async function follow(frames: Frames, progress: TurnProgress): Promise<StreamEnd> {
  let answer = '';
  for await (const frame of frames) {
    const event = toTurnEvent(frame);
    switch (event?.kind) {
      case 'tool_start':
        progress.toolStarted(event.tool, event.args);
        break;
      case 'tool_done':
        progress.toolDone(event.tool, event.summary);
        break;
      case 'thinking':
        progress.thinking(event.message);
        break;
      case 'text':
        answer += event.text;
        progress.writing();
        break;
      case 'error':
        return { end: 'error', answer, message: event.message };
      case 'done':
        return { end: 'done', answer, totalTokens: event.totalTokens, summarized: event.summarized };
      case undefined:
        break;
    }
  }
  return { end: 'closed', answer };
}

function showAnswer(terminal: Terminal, answer: string): void {
  terminal.print(answer.trim() === '' ? terminal.style('dim', '(no answer)') : renderAnswer(answer, terminal));
}

function showFooter(terminal: Terminal, totalTokens: number | undefined, summarized: boolean | undefined): void {
  const parts: string[] = [];
  if (totalTokens !== undefined) parts.push(`${totalTokens.toLocaleString('en-US')} tokens in this session`);
  if (summarized) parts.push('older messages were summarized');
  if (parts.length > 0) terminal.print(terminal.style('dim', `(${parts.join('; ')})`));
}

/** Ends a stream that did not finish with `done`: what arrived is shown, then why it stopped. */
function unfinished(terminal: Terminal, outcome: Exclude<StreamEnd, { end: 'done' }>): never {
  if (outcome.answer.trim() !== '') showAnswer(terminal, outcome.answer);
  if (outcome.end === 'error') throw new CliError(`The run failed: ${outcome.message}`);
  throw new CliError('The stream ended before the run finished', 'the reply may be incomplete; the service log may say why');
}

/** A 404 from a route the service does not have (older servers), as opposed to a missing conversation. */
function isMissingRoute(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 405 || (error.status === 404 && error.detail !== 'Conversation not found'));
}

async function withProgress<T>(context: TurnContext, work: (progress: TurnProgress) => Promise<T>): Promise<T> {
  const progress = new TurnProgress(context.terminal, context.session.workingDir);
  progress.start();
  try {
    return await work(progress);
  } finally {
    progress.stop();
  }
}

/** SPEC.md's path: stream a one-off run, buffer the reply, then store both messages with /save. */
async function agentStreamTurn(context: TurnContext, text: string): Promise<void> {
  const { client, session, terminal, signal } = context;
  const request = { agent_type: session.agentType, prompt: text, working_dir: session.workingDir, mode: session.mode };
  const outcome = await withProgress(context, async (progress) => follow(await client.streamAgent(request, signal), progress));
  if (outcome.end !== 'done') unfinished(terminal, outcome);
  showAnswer(terminal, outcome.answer);
  const saved = await client.saveMessages(session.conversationId, { user_content: text, assistant_content: outcome.answer }, signal);
  showFooter(terminal, saved.total_tokens, false);
}

/** The streamed turn: the service stores both messages and the conversation keeps its memory. */
async function turnStreamTurn(context: TurnContext, text: string): Promise<void> {
  const { client, session, terminal, signal } = context;
  const outcome = await withProgress(context, async (progress) => {
    let frames: Frames;
    try {
      frames = await client.streamTurn(session.conversationId, { content: text, mode: session.mode }, signal);
    } catch (error) {
      if (isMissingRoute(error)) return undefined;
      throw error;
    }
    return follow(frames, progress);
  });
  if (outcome === undefined) {
    session.transport = 'agent-stream';
    terminal.notice('This service has no streamed turns; using /agents/stream and saving each reply with /save.');
    return agentStreamTurn(context, text);
  }
  if (outcome.end !== 'done') unfinished(terminal, outcome);
  showAnswer(terminal, outcome.answer);
  showFooter(terminal, outcome.totalTokens, outcome.summarized);
}

/** Without streaming: one blocking call; only a spinner shows that something is happening. */
async function messagesTurn(context: TurnContext, text: string): Promise<void> {
  const { client, session, terminal, signal } = context;
  const reply = await withProgress(context, () => client.addMessage(session.conversationId, { content: text, mode: session.mode }, signal));
  showAnswer(terminal, reply.assistant_message.content);
  showFooter(terminal, reply.total_tokens, reply.summarized);
}

/** One prompt, sent the way the session says; failures are thrown for the chat to show. */
export function runTurn(context: TurnContext, text: string): Promise<void> {
  switch (context.session.transport) {
    case 'turn-stream':
      return turnStreamTurn(context, text);
    case 'agent-stream':
      return agentStreamTurn(context, text);
    case 'messages':
      return messagesTurn(context, text);
  }
}
