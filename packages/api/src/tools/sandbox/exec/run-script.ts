import type { Invocation } from '../command-policy/index.js';
import { isPolicyError, refusalMessage } from '../command-policy/index.js';
import { MAX_OUTPUT_CHARS, OutputCollector } from './output-collector.js';
import { ProcessGroups, type StopReason } from './process-groups.js';
import { PipeFactory } from './os-pipe.js';
import { PipelineRun, directLauncher, type Launcher } from './run-pipeline.js';
import { SandboxStartError } from './sandbox-start.js';

/** The list structure the runner walks; the policy's ScriptSpec has this shape. */
export interface ScriptShape<C> {
  statements: { first: { commands: C[] }; rest: { operator: '&&' | '||'; pipeline: { commands: C[] } }[] }[];
}

export interface RunOptions<C> {
  cwd: string;
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Turns a command into what runs, checking it again at that moment; throws to refuse. */
  prepare(command: C): Invocation | Promise<Invocation>;
  locate(name: string): string | undefined;
  launcher?: Launcher;
  maxOutputChars?: number;
  /** Discarded output past which the commands are stopped. */
  floodChars?: number;
  killGraceMs?: number;
  flushMs?: number;
  /**
   * Started with the commands and stopped after them: it calls `stop` to kill every process at once
   * (the run then ends with `stopped: 'guard'`). The disk floor (disk-floor.ts) is one.
   */
  guard?: (stop: () => void) => () => void;
  /** Told when a command's sandbox failed before the command started and it is started again. */
  onSandboxRetry?: (failure: SandboxStartError) => void;
}

export interface RunResult {
  /** stdout and stderr of every command, in the order they arrived, cut at maxOutputChars. */
  output: string;
  truncated: boolean;
  /** Status of the last pipeline that ran (bash's `$?`); null when nothing ran. */
  exitCode: number | null;
  stopped: StopReason | undefined;
  /** The exit status of every command that ran, in the order they ended pipeline by pipeline. */
  statuses: number[];
  /** Set when a command was refused when its turn came (the commands before it did run). */
  refusal?: string;
  /** Set when bubblewrap could not set up a command's sandbox, even when tried again: nothing from there on ran. */
  sandboxFailure?: SandboxStartError;
}

/**
 * Runs a checked script without a shell: statements in order, `&&`/`||` by exit status,
 * pipelines by PipelineRun. The timeout and the abort signal stop every process group.
 */
export async function runScript<C>(script: ScriptShape<C>, options: RunOptions<C>): Promise<RunResult> {
  const groups = new ProcessGroups(options.killGraceMs ?? 2000);
  const collector = new OutputCollector(options.maxOutputChars ?? MAX_OUTPUT_CHARS, options.floodChars, () => groups.stop('flood'));
  const timer = setTimeout(() => groups.stop('timeout'), options.timeoutMs);
  const onAbort = (): void => groups.stop('abort');
  options.signal?.addEventListener('abort', onAbort);
  if (options.signal?.aborted === true) groups.stop('abort');
  const pipes = new PipeFactory(options.locate);
  const statuses: number[] = [];
  const context = {
    pipes,
    cwd: options.cwd,
    env: options.env,
    collector,
    groups,
    launcher: options.launcher ?? directLauncher,
    locate: options.locate,
    flushMs: options.flushMs ?? 1000,
    onSandboxRetry: options.onSandboxRetry ?? (() => {}),
    onStatuses: (each: readonly number[]) => statuses.push(...each),
  };
  const runPipeline = async (commands: C[]): Promise<number> => {
    const invocations: Invocation[] = [];
    for (const command of commands) invocations.push(await options.prepare(command));
    return new PipelineRun(invocations, context).run();
  };
  const unguard = options.guard?.(() => groups.kill('guard'));
  let exitCode: number | null = null;
  let refusal: string | undefined;
  let sandboxFailure: SandboxStartError | undefined;
  try {
    for (const statement of script.statements) {
      if (groups.stopped) break;
      exitCode = await runPipeline(statement.first.commands);
      for (const { operator, pipeline } of statement.rest) {
        if (groups.stopped) break;
        if ((operator === '&&') === (exitCode === 0)) exitCode = await runPipeline(pipeline.commands);
      }
    }
  } catch (error) {
    if (error instanceof SandboxStartError) sandboxFailure = error;
    else if (isPolicyError(error)) refusal = refusalMessage(error);
    else throw error;
  } finally {
    unguard?.();
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
    groups.dispose();
    pipes.dispose();
  }
  return {
    output: collector.text,
    truncated: collector.truncated,
    exitCode,
    statuses,
    stopped: groups.reason,
    ...(refusal === undefined ? {} : { refusal }),
    ...(sandboxFailure === undefined ? {} : { sandboxFailure }),
  };
}
