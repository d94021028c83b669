import type { PermissionMode } from '@mada/protocol';
import { RequestCancelledError } from '../api/errors.js';
import { approvalHandler, approvalPrompt } from '../chat/approval-prompt.js';
import { follow } from '../chat/event-loop.js';
import { LineReader } from '../chat/line-reader.js';
import { cancelQuietly } from '../chat/turn.js';
import { resolveSettings, type FlagValues } from '../config/resolve.js';
import { CliError, EXIT_ERROR, EXIT_OK, UsageError } from '../errors.js';
import { followRun } from '../stream/run-follower.js';
import { renderAnswer } from '../ui/markdown.js';
import { TurnProgress } from '../ui/progress.js';
import type { Terminal } from '../ui/terminal.js';
import { workingDirectory } from './directory.js';
import { apiFlag, clientFor, type ServiceFlags } from './service.js';

export type OnAskChoice = 'ask' | 'deny';

export interface RunFlags extends ServiceFlags {
  directory?: string;
  agent: string;
  mode?: PermissionMode;
  json?: boolean;
  onAsk?: OnAskChoice;
  model?: string;
}

/** What `mada run` exits with after Ctrl-C, as shells report a command ended by SIGINT. */
export const EXIT_INTERRUPTED = 130;

export interface RunInput {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

function runFlags(flags: RunFlags): FlagValues {
  return { ...apiFlag(flags), ...(flags.mode === undefined ? {} : { mode: { raw: flags.mode, flag: '--mode' } }) };
}

/** Each frame goes to stdout as one JSON line before the progress sees it. */
async function* printed(frames: AsyncIterable<{ frame: Record<string, unknown> }>, print: ((frame: Record<string, unknown>) => void) | undefined): AsyncGenerator<Record<string, unknown>> {
  for await (const { frame } of frames) {
    print?.(frame);
    yield frame;
  }
}

/**
 * `mada run "<prompt>"`: one run for scripts. stdout holds only the answer (or, with --json, the
 * run's events as JSON lines); progress and questions go to stderr. An approval is asked on the
 * terminal, or refused at once by the service when nobody can answer (stdin not a terminal, or
 * --on-ask deny). The exit code is 0 when the run succeeded.
 */
export async function runCommand(words: string[], flags: RunFlags, terminal: Terminal, input: RunInput = { stdin: process.stdin }): Promise<number> {
  const prompt = words.join(' ').trim();
  if (prompt === '') throw new UsageError('The prompt is empty', 'mada run "<what the agent should do>"');
  const { values } = resolveSettings(runFlags(flags));
  const client = clientFor(values);
  const workingDir = workingDirectory(flags.directory);
  const onAsk = flags.onAsk ?? (input.stdin.isTTY ? 'ask' : 'deny');
  const progressTerminal = terminal.toStderr();
  const controller = new AbortController();
  const interrupt = (): void => controller.abort();
  let reader: LineReader | undefined;
  const read = (question: string, withdrawn: AbortSignal): Promise<string | null> => {
    reader ??= new LineReader({ input: input.stdin, output: process.stderr, history: [], historySize: 0, completer: (line) => [[], line], onInterrupt: interrupt });
    return reader.read(question, withdrawn);
  };
  process.on('SIGINT', interrupt);
  const progress = new TurnProgress(progressTerminal, workingDir, { live: false });
  let runId: string | undefined;
  try {
    const run = await client.startRun(
      { agent_type: flags.agent, prompt, working_dir: workingDir, mode: values.mode, on_ask: onAsk === 'ask' ? 'wait' : 'deny', ...(flags.model === undefined ? {} : { model: flags.model }) },
      controller.signal,
    );
    runId = run.id;
    const model = run.model === null || run.model === undefined ? '' : ` · model ${run.model}`;
    progressTerminal.print(progressTerminal.style('dim', `Run ${run.id} · agent ${run.agent_type} · mode ${values.mode} · ${run.working_dir}${model}`));
    const reattaching = (): void => progressTerminal.notice('The connection dropped; reattaching to the run…');
    const events = followRun(client, run.id, { signal: controller.signal, onReattach: reattaching });
    const handlers = { approvalRequested: approvalHandler(approvalPrompt({ client, terminal: progressTerminal, read, signal: controller.signal })) };
    progress.start();
    const outcome = await follow(printed(events, flags.json ? (frame) => terminal.printJsonLine(frame) : undefined), progress, handlers, run.id);
    progress.stop();
    if (outcome.end === 'done') {
      if (!flags.json) terminal.print(renderAnswer(outcome.answer, terminal));
      return EXIT_OK;
    }
    const why = outcome.end === 'error' ? outcome.message : 'the event stream ended before the run finished';
    progressTerminal.error(`The run did not succeed: ${why}`, `\`mada runs\` shows it; \`mada attach ${run.id}\` replays it`);
    return EXIT_ERROR;
  } catch (error) {
    if (!(error instanceof RequestCancelledError)) throw error;
    if (runId !== undefined) await cancelQuietly(client, runId);
    throw new CliError('Cancelled', runId === undefined ? undefined : `run ${runId} was cancelled`, EXIT_INTERRUPTED);
  } finally {
    progress.stop();
    process.off('SIGINT', interrupt);
    reader?.close();
  }
}
