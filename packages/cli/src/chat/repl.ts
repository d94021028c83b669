import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { clearScreenDown, cursorTo } from 'node:readline';
import type { ConversationResponse, PermissionMode } from '@mada/protocol';
import type { ApiClient } from '../api/client.js';
import { lastRunCommand } from '../commands/checkpoints.js';
import { resolveSessionId } from '../commands/id-prefix.js';
import { ApiError, RequestCancelledError } from '../api/errors.js';
import { explainFailure } from '../api/explain.js';
import { expandHome } from '../config/home.js';
import { CliError, EXIT_ERROR, EXIT_OK } from '../errors.js';
import { safeText } from '../ui/safe-text.js';
import { clip } from '../ui/table.js';
import type { Terminal } from '../ui/terminal.js';
import { createCompleter } from './completer.js';
import { HISTORY_SIZE, HistoryFile } from './history.js';
import { parseInput } from './inputs.js';
import { LineReader } from './line-reader.js';
import type { ChatSession, Transport } from './session.js';
import type { TurnEventHandlers } from './event-loop.js';
import { runTurn } from './turn.js';
import { approvalHandler, approvalPrompt } from './approval-prompt.js';

export interface ChatStart {
  agentType: string;
  workingDir: string;
  mode: PermissionMode;
  stream: boolean;
  resumeId?: string | undefined;
  /** --model: the model of the new session's turns; absent: the service's default (or the resumed session's). */
  model?: string | undefined;
  /** -d was given: with --resume it cannot apply, and the user should hear so. */
  directoryGiven?: boolean;
}

export interface ChatOptions {
  client: ApiClient;
  terminal: Terminal;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream & { isTTY?: boolean };
  historyFile: string;
  start: ChatStart;
  /** First line of the welcome: version, service URL. */
  title: string;
  /** Hooks for events the chat answers (approvals). */
  eventHandlers?: TurnEventHandlers;
}

const HELP = [
  'Type a request for the agent, or:',
  '  mode plan|default|auto_accept   change the permission mode (mode alone shows it)',
  '  model <name>, /model <name>     send the next turns to another model (model alone shows it; mada models lists them)',
  '  cd <path>                       work in another directory (starts a new session there)',
  '  /diff                           show what the last run changed',
  '  /undo [--force]                 put back every file the last run changed',
  '  clear                           clear the screen',
  '  exit, quit, Ctrl-D              leave (Ctrl-C at an empty prompt too)',
  'Ctrl-C during a run cancels it. Tab completes commands and directories after cd.',
];

const modelText = (model: string | null | undefined): string => (model === null || model === undefined ? '' : ` · model ${safeText(model)}`);

const MODE_COLOR = { default: 'green', plan: 'cyan', auto_accept: 'yellow' } as const;

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** How many of the latest messages a resumed session reads to show where it left off. */
const RECENT_PAGE = 20;

/** The interactive chat: one conversation at a time, one turn per line. */
export class Chat {
  private readonly reader: LineReader;
  private readonly history: HistoryFile;
  private session: ChatSession | undefined;
  private running: AbortController | undefined;
  private failedTurns = 0;
  private readonly onSignal = (): void => this.interrupt(true);

  constructor(private readonly options: ChatOptions) {
    const { terminal } = options;
    this.history = new HistoryFile(options.historyFile, (message) => terminal.notice(message));
    this.reader = new LineReader({
      input: options.input,
      output: options.output,
      history: this.history.load(),
      historySize: HISTORY_SIZE,
      completer: createCompleter(() => this.session?.workingDir ?? options.start.workingDir),
      onInterrupt: (lineEmpty) => this.interrupt(lineEmpty),
    });
  }

  async run(): Promise<number> {
    // Without a terminal, Ctrl-C arrives as a signal rather than through readline.
    process.on('SIGINT', this.onSignal);
    try {
      const { start } = this.options;
      if (start.mode === 'auto_accept' && !(await this.confirmAutoAccept())) {
        throw new CliError('Not started: auto_accept was not confirmed', 'start again with --mode default or --mode plan');
      }
      this.session = start.resumeId ? await this.resume(start.resumeId) : await this.create(start.workingDir, start.mode);
      await this.loop();
      this.farewell();
      return !this.reader.interactive && this.failedTurns > 0 ? EXIT_ERROR : EXIT_OK;
    } finally {
      process.off('SIGINT', this.onSignal);
      this.reader.close();
    }
  }

  /** The stored run of the session's latest turn, if it ran as one. */
  get lastRunId(): string | undefined {
    return this.session?.lastRunId;
  }

  private get transport(): Transport {
    return this.options.start.stream ? 'runs' : 'messages';
  }

  private async create(workingDir: string, mode: PermissionMode): Promise<ChatSession> {
    const { client, start, terminal, title } = this.options;
    const chosen = start.model === undefined ? {} : { model: start.model };
    const conversation = await client.createConversation({ agent_type: start.agentType, working_dir: workingDir, ...chosen });
    const session: ChatSession = { conversationId: conversation.id, agentType: start.agentType, workingDir, mode, transport: this.transport, ...chosen };
    terminal.print(terminal.style('bold', title));
    terminal.print(`New session ${conversation.id} · agent ${session.agentType} · ${workingDir}${modelText(conversation.model ?? start.model)}`);
    terminal.print(terminal.style('dim', 'Type a request, or help for the commands; Ctrl-D leaves.'));
    return session;
  }

  private async resume(id: string): Promise<ChatSession> {
    const { client, start, terminal, title } = this.options;
    const conversation = await client.conversation(await resolveSessionId(client, id));
    // The agent and the directory belong to the conversation; the service uses its own.
    const session: ChatSession = {
      conversationId: conversation.id,
      agentType: conversation.agent_type,
      workingDir: conversation.working_dir,
      mode: start.mode,
      transport: this.transport,
      // --model with --resume: this run of the chat sends its turns there; the session keeps its own.
      ...(start.model === undefined ? {} : { model: start.model }),
    };
    terminal.print(terminal.style('bold', title));
    terminal.print(`Resumed session ${conversation.id} · agent ${session.agentType} · ${session.workingDir}${modelText(start.model ?? conversation.model)}`);
    if (start.directoryGiven && start.workingDir !== session.workingDir) {
      terminal.notice(`The session works in ${session.workingDir}; -d applies to new sessions only (cd starts one).`);
    }
    await this.showRecent(conversation);
    return session;
  }

  /** The title, size and last two messages, from one page of the latest history. */
  private async showRecent(conversation: ConversationResponse): Promise<void> {
    const { client, terminal } = this.options;
    const recent = await client.recentMessages(conversation.id, RECENT_PAGE);
    const visible = recent.messages.filter((message) => !message.is_summary || message.role === 'summary');
    const count = `${visible.length}${recent.has_more ? '+' : ''}`;
    const heading = `${safeText(conversation.title ?? '(untitled)')} · ${count} messages · ${conversation.total_tokens} tokens`;
    terminal.print(terminal.style('dim', heading));
    for (const message of visible.slice(-2)) {
      terminal.print(terminal.style('dim', `  ${message.role}: ${clip(message.content, 100)}`));
    }
  }

  private prompt(): string {
    const { terminal } = this.options;
    const mode = this.session?.mode ?? 'default';
    return `${terminal.style('bold', 'mada')} [${terminal.style(MODE_COLOR[mode], mode)}] › `;
  }

  private async loop(): Promise<void> {
    for (;;) {
      const line = await this.reader.read(this.prompt());
      if (line === null) return;
      this.history.append(line);
      const input = parseInput(line);
      switch (input.kind) {
        case 'empty':
          break;
        case 'exit':
          return;
        case 'help':
          for (const text of HELP) this.options.terminal.print(text);
          break;
        case 'clear':
          this.clearScreen();
          break;
        case 'mode':
          await this.changeMode(input.mode, input.given);
          break;
        case 'model':
          await this.attempt(() => this.changeModel(input.name));
          break;
        case 'cd':
          await this.attempt(() => this.changeDirectory(input.path));
          break;
        case 'prompt':
          await this.turn(input.text);
          break;
        case 'diff':
        case 'undo':
          await this.attempt(() => lastRunCommand(input.kind, this.options.client, this.options.terminal, input.kind === 'undo' && input.force));
          break;
      }
    }
  }

  private async turn(text: string): Promise<void> {
    const session = this.session!;
    const controller = new AbortController();
    this.running = controller;
    try {
      const { client, terminal, eventHandlers } = this.options;
      const handlers: TurnEventHandlers = {
        ...eventHandlers,
        approvalRequested: eventHandlers?.approvalRequested ?? approvalHandler(approvalPrompt({ client, terminal, read: (question, withdrawn) => this.ask(question, withdrawn), signal: controller.signal })),
      };
      await runTurn({ client, terminal, session, signal: controller.signal, handlers }, text);
    } catch (error) {
      if (error instanceof RequestCancelledError) {
        this.options.terminal.print(this.options.terminal.style('dim', 'Cancelled.'));
      } else {
        this.failedTurns += 1;
        this.report(error);
      }
    } finally {
      this.running = undefined;
    }
  }

  private async attempt(action: () => Promise<void>): Promise<void> {
    try {
      await action();
    } catch (error) {
      this.report(error);
    }
  }

  private report(error: unknown): void {
    const failure = explainFailure(error);
    this.options.terminal.error(failure.message, failure.hint);
  }

  /** Ctrl-C: cancels a run; otherwise clears a typed line, or leaves at an empty prompt. */
  private interrupt(lineEmpty: boolean): void {
    if (this.running) this.running.abort();
    else if (!lineEmpty) this.reader.clearLine();
    else {
      this.options.output.write('\n');
      this.reader.close();
    }
  }

  private async confirmAutoAccept(): Promise<boolean> {
    const { terminal } = this.options;
    terminal.notice('auto_accept lets the agent edit files and run commands without asking.');
    const answer = await this.ask('Continue in auto_accept mode? [y/N] ');
    return /^y(es)?$/i.test(answer?.trim() ?? '');
  }

  /** One answer line; without a terminal the question and the answer are echoed, as a transcript. */
  private async ask(question: string, withdrawn?: AbortSignal): Promise<string | null> {
    if (!this.reader.interactive) this.options.output.write(question);
    const answer = await this.reader.read(question, withdrawn);
    if (!this.reader.interactive && answer !== null) this.options.output.write(`${answer}\n`);
    return answer;
  }

  private async changeMode(mode: PermissionMode | undefined, given: string | undefined): Promise<void> {
    const { terminal } = this.options;
    const session = this.session!;
    if (mode === undefined) {
      if (given !== undefined) terminal.error(`Unknown mode: ${given}`, 'use mode default, mode plan or mode auto_accept');
      else terminal.print(`Mode: ${session.mode} (others: default, plan, auto_accept)`);
      return;
    }
    if (mode === 'auto_accept' && session.mode !== 'auto_accept' && !(await this.confirmAutoAccept())) {
      terminal.print(`Mode stays ${session.mode}.`);
      return;
    }
    session.mode = mode;
    terminal.print(`Mode: ${mode}`);
  }

  /**
   * The model of the next turns. Checked against the service's list, so a typo is told here and
   * not at the next turn; a service without `/models` is left to judge the name itself.
   */
  private async changeModel(name: string | undefined): Promise<void> {
    const { terminal, client } = this.options;
    const session = this.session!;
    if (name === undefined) {
      terminal.print(`Model: ${session.model ?? "the session's own"}`);
      return;
    }
    const listed = await client.models().catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    });
    if (listed !== undefined && !listed.models.some((model) => model.name === name)) {
      throw new CliError(`Unknown model: ${safeText(name)}`, `the service has: ${listed.models.map((model) => model.name).join(', ')}`);
    }
    session.model = name;
    terminal.print(`Model: ${safeText(name)}`);
  }

  /** A conversation's directory is fixed on the service, so a new directory means a new session. */
  private async changeDirectory(path: string): Promise<void> {
    const { terminal, client } = this.options;
    const session = this.session!;
    const target = resolve(session.workingDir, expandHome(path === '' ? '~' : path));
    if (!isDirectory(target)) throw new CliError(`Not a directory: ${target}`);
    if (target === session.workingDir) {
      terminal.print(`Already in ${target}`);
      return;
    }
    const conversation = await client.createConversation({ agent_type: session.agentType, working_dir: target, ...(session.model === undefined ? {} : { model: session.model }) });
    const previous = session.conversationId;
    Object.assign(session, { conversationId: conversation.id, workingDir: target });
    terminal.print(`Working directory: ${target}`);
    terminal.print(terminal.style('dim', `New session ${conversation.id} (the previous one, ${previous}, can be resumed)`));
  }

  private clearScreen(): void {
    const { output } = this.options;
    if (!output.isTTY) return;
    cursorTo(output, 0, 0);
    clearScreenDown(output);
  }

  private farewell(): void {
    const { terminal } = this.options;
    if (this.session) terminal.print(terminal.style('dim', `Resume with: mada chat --resume ${this.session.conversationId}`));
  }
}
