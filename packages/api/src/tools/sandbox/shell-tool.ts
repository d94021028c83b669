import { homedir } from 'node:os';
import { fail, succeed, type ToolContext, type ToolResult } from '../tool.js';
import { bwrapLauncher, detectConfinement, type Confinement } from './bubblewrap.js';
import { authorizeCommand, checkCommand, refusalMessage, type CheckedCommand, type ShellToolName } from './command-policy/index.js';
import { childEnvironment } from './exec/environment.js';
import { MAX_OUTPUT_CHARS } from './exec/output-collector.js';
import { locateProgram } from './exec/program-path.js';
import { runScript, type RunResult } from './exec/run-script.js';
import { formatRunOutput, runSucceeded } from './shell-output.js';

export interface ShellParams {
  command: string;
  cwd?: string | undefined;
  timeout: number;
}

const READONLY_CONFINEMENT: Confinement = { active: false, reason: 'bash_readonly runs under the text policy only' };

async function confinementFor(tool: ShellToolName, context: ToolContext, searchPath: string): Promise<Confinement> {
  return tool === 'bash' ? detectConfinement(context.settings, searchPath) : READONLY_CONFINEMENT;
}

/**
 * Shared by bash_readonly and bash: check the command text, then run the checked plan without a
 * shell, inside bubblewrap for bash when it is available.
 */
export async function runShellTool(tool: ShellToolName, params: ShellParams, context: ToolContext): Promise<ToolResult> {
  const env = childEnvironment(process.env, context.sandbox.roots);
  const searchPath = env.PATH as string;
  const locate = (name: string): string | undefined => locateProgram(name, searchPath);
  let checked: CheckedCommand;
  try {
    checked = await checkCommand({
      tool,
      command: params.command,
      cwd: params.cwd ?? context.workingDir,
      baseDir: context.workingDir,
      sandbox: context.sandbox,
      home: env.HOME ?? homedir(),
      locate,
    });
  } catch (error) {
    return fail(refusalMessage(error), { refused: true });
  }
  const timeoutSeconds = Math.min(params.timeout, context.settings.toolTimeoutSeconds);
  const confinement = await confinementFor(tool, context, searchPath);
  const launcher =
    confinement.active && confinement.bwrapPath !== undefined
      ? bwrapLauncher(
          {
            bwrapPath: confinement.bwrapPath,
            allowedPaths: context.sandbox.roots,
            readOnlyFiles: context.sandbox.protectedFiles,
            network: context.settings.sandboxNetwork,
          },
          checked.cwd,
        )
      : undefined;
  let result: RunResult;
  try {
    result = await runScript(checked.script, {
      cwd: checked.cwd,
      env,
      timeoutMs: timeoutSeconds * 1000,
      signal: context.signal,
      prepare: (command) => authorizeCommand(command, checked.context),
      locate,
      ...(launcher === undefined ? {} : { launcher }),
    });
  } catch (error) {
    return fail(`Command failed to run: ${(error as Error).message}`, { confined: confinement.active });
  }
  const text = formatRunOutput(result, { timeoutSeconds, maxOutputChars: MAX_OUTPUT_CHARS });
  const metadata = {
    exit_code: result.exitCode,
    timed_out: result.stopped === 'timeout',
    truncated: result.truncated,
    confined: confinement.active,
    cwd: checked.cwd,
  };
  return runSucceeded(result) ? succeed(text, metadata) : fail(text, metadata);
}
