import { homedir } from 'node:os';
import { fail, succeed, type ToolContext, type ToolResult } from '../tool.js';
import { sandboxUnavailableMessage, type SandboxLauncher } from './launcher.js';
import { gitlinkNotes } from './gitlink-guard.js';
import { censusNotes, type RepositoryWatch } from './repository-census.js';
import { SandboxCoordinationRefusal } from './census-coordinator.js';
import { protectedPathBytesFor, toolSandbox } from './tool-sandbox.js';
import { authorizeCommand, checkCommand, refusalMessage, type CheckedCommand, type CheckRequest, type Invocation, type ShellToolName } from './command-policy/index.js';
import { refuse } from './command-policy/refusal.js';
import { isWithin } from './paths.js';
import { childEnvironment } from './exec/environment.js';
import { MAX_OUTPUT_CHARS } from './exec/output-collector.js';
import { locateProgram } from './exec/program-path.js';
import type { Launcher } from './exec/run-pipeline.js';
import { runScript, type RunResult } from './exec/run-script.js';
import { formatRunOutput, runSucceeded } from './shell-output.js';
import { errorMessage } from '../../util/error-message.js';
import { putBack, type PutBack } from './put-back.js';
import { diskGuard, type DiskGuard } from './disk-guard.js';
import type { ProtectedSnapshot } from './protected-snapshot.js';

export interface ShellParams {
  command: string;
  cwd?: string | undefined;
  timeout: number;
}

/**
 * Git reads no system or user config and never prompts; repository config is confined by the
 * sandbox. The empty GIT_PROXY_COMMAND and GIT_ASKPASS win over the repository's `core.gitProxy`
 * (for which `-c` cannot: git takes the first value it reads) and `core.askPass`, programs git
 * would start for a git:// fetch or a server asking for credentials.
 */
const GIT_ENVIRONMENT = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0', GIT_PROXY_COMMAND: '', GIT_ASKPASS: '' };

/**
 * bash_readonly's git writes no lock and fetches nothing. In a partial clone, showing a missing
 * object fetches it from the promisor remote with the upload-pack program the repository's config
 * names; GIT_ALLOW_PROTOCOL (a name no transport has) overrides every `protocol.*.allow` of that
 * config, and GIT_NO_LAZY_FETCH stops the fetch itself where git is new enough (2.44).
 */
const READONLY_GIT_ENVIRONMENT = { GIT_OPTIONAL_LOCKS: '0', GIT_ALLOW_PROTOCOL: 'none', GIT_NO_LAZY_FETCH: '1' };

function restoredNote(restored: readonly string[]): string {
  return `[protected files were changed and have been restored: ${restored.join(', ')}]`;
}

/**
 * The policy's question for a call, the same for the run and for an approve_always grant's scope.
 * `searchPath` is the PATH the commands get; a caller that built their environment passes its own.
 */
export function shellCheckRequest(
  tool: ShellToolName,
  params: Pick<ShellParams, 'command' | 'cwd'>,
  context: ToolContext,
  searchPath = childEnvironment(process.env, context.sandbox.roots).PATH as string,
): CheckRequest {
  return {
    tool,
    command: params.command,
    cwd: params.cwd ?? context.workingDir,
    baseDir: context.workingDir,
    sandbox: context.sandbox,
    home: process.env.HOME ?? homedir(),
    locate: (name) => locateProgram(name, searchPath),
  };
}

/**
 * A command as checked just before it starts, against what let it run without asking: an earlier
 * command of the call (a checkout, an extraction) may have put a link where a path was a plain name.
 */
function keptToScopes(invocation: Invocation, context: ToolContext): Invocation {
  keptTo(invocation, invocation.reach, 'acts on', context.grantScope, 'the directory its standing approval covers');
  keptTo(invocation, invocation.changes, 'changes', context.changeScope, 'the directory it may change without asking');
  return invocation;
}

function keptTo(invocation: Invocation, paths: string[] | undefined, verb: string, scope: string | undefined, what: string): void {
  if (scope === undefined) return;
  const outside = paths === undefined ? 'paths it cannot name' : paths.find((path) => !isWithin(scope, path));
  if (outside !== undefined) refuse(`${invocation.program} now ${verb} ${outside}, outside ${scope}, ${what}; run it again to ask`);
}

/**
 * Shared by bash_readonly and bash: check the command text, then run the checked plan without a
 * shell, every process inside the sandbox (allowed paths read-only for bash_readonly, writable for
 * bash). With the sandbox enabled but unavailable, nothing runs. Protected files are compared
 * before and after, and any change is undone and reported.
 */
export async function runShellTool(tool: ShellToolName, params: ShellParams, context: ToolContext): Promise<ToolResult> {
  const env: Record<string, string> = {
    ...childEnvironment(process.env, context.sandbox.roots),
    ...GIT_ENVIRONMENT,
    ...(tool === 'bash_readonly' ? READONLY_GIT_ENVIRONMENT : {}),
  };
  const searchPath = env.PATH as string;
  const availability = await context.host.sandboxes.detect(context.settings);
  if (availability.state === 'unavailable') return fail(sandboxUnavailableMessage(availability.reason), { refused: true, confined: false });
  const request = shellCheckRequest(tool, params, context, searchPath);
  const locate = request.locate;
  let checked: CheckedCommand;
  try {
    checked = await checkCommand(request);
  } catch (error) {
    return fail(refusalMessage(error), { refused: true });
  }
  // bash_readonly writes nothing but its private /tmp, which memory bounds. Checked before anything
  // is recorded or built: a refusal here leaves nothing to undo.
  const disk: DiskGuard = tool === 'bash' ? await diskGuard(checked.script, context) : { note: () => undefined };
  if (disk.refusal !== undefined) return fail(disk.refusal, { refused: true, below_disk_floor: true });
  const timeoutSeconds = Math.min(params.timeout, context.settings.toolTimeoutSeconds);
  // How long a first census or the command may wait for another service replica (census-coordinator.ts).
  const wait = { timeoutMs: timeoutSeconds * 1000, signal: context.signal };
  // Before the sandbox is built (it must be disposed of once built): a tree too big to check after the command.
  const tooBig = tool === 'bash' ? await context.host.repositories.admit(context.sandbox, wait) : undefined;
  if (tooBig !== undefined) return fail(tooBig, { refused: true });
  const sandbox = await toolSandbox(context, tool === 'bash' ? 'write' : 'read', searchPath, checked.cwd);
  if (sandbox.availability.state === 'unavailable') return fail(sandboxUnavailableMessage(sandbox.availability.reason), { refused: true, confined: false });
  const confined = sandbox.launcher !== undefined;
  const launcher: Launcher | undefined = sandbox.launcher && ((invocation) => (sandbox.launcher as SandboxLauncher).launch(invocation.executable, invocation.argv.slice(1), checked.cwd, { status: true, argumentBytes: true }));
  const protectedPaths = protectedPathBytesFor(context, checked.cwd);
  let snapshot: ProtectedSnapshot | undefined;
  let result: RunResult | undefined;
  let runError: unknown;
  let done: PutBack;
  try {
    // bash_readonly cannot write an index or a repository: only bash is checked for new gitlinks
    // and for changes to the other repositories under the allowed paths.
    const gitlinks = tool === 'bash' ? await context.host.gitlinks.watch(checked.cwd, context.sandbox) : undefined;
    let repositories: RepositoryWatch | undefined;
    try {
      repositories = tool === 'bash' ? await context.host.repositories.watch(context.sandbox, wait) : undefined;
    } catch (error) {
      // Nothing ran: the sandbox goes, and a wait for another replica that ran out is a refusal.
      sandbox.launcher?.dispose();
      if (error instanceof SandboxCoordinationRefusal) return fail(error.message, { refused: true, confined });
      throw error;
    }
    // Restored to the baseline taken before any running command that could write these paths, never
    // to what one of them planted meanwhile (ProtectedBaselines). Taken after the command is
    // recorded for the other replicas: one whose command ended before that record had its plant
    // removed by its own check already, and one still running is seen and distrusted here.
    try {
      snapshot = context.host.protectedFiles.take(protectedPaths, tool === 'bash' ? context.sandbox.roots : []);
    } catch (error) {
      // Nothing ran either, but the command is recorded as running: its check ends that record.
      sandbox.launcher?.dispose();
      await repositories?.check([]).catch(() => undefined);
      throw error;
    }
    // The protected files' baselines may hold what another replica's running command planted.
    if (repositories?.othersRunning === true) snapshot.distrust();
    try {
      result = await runScript(checked.script, {
        cwd: checked.cwd,
        env,
        timeoutMs: timeoutSeconds * 1000,
        signal: context.signal,
        prepare: async (command) => keptToScopes(await authorizeCommand(command, checked.context), context),
        locate,
        ...(launcher === undefined ? {} : { launcher }),
        ...(disk.guard === undefined ? {} : { guard: disk.guard }),
        onSandboxRetry: (failure) => context.log?.warn({ programs: failure.programs }, 'bubblewrap failed to set up a sandbox before the command started; starting it again'),
      });
    } catch (error) {
      runError = error;
    }
    sandbox.launcher?.dispose();
    done = await putBack(snapshot, snapshot.handled, repositories, gitlinks);
  } finally {
    // Whatever failed: a baseline kept past its commands would later undo the user's own changes.
    snapshot?.release();
  }
  const { restored, census, gitlinkReport } = done;
  if (result === undefined) return fail(`Command failed to run: ${errorMessage(runError)}`, { confined });
  if (result.sandboxFailure !== undefined) context.log?.warn({ programs: result.sandboxFailure.programs, attempts: result.sandboxFailure.attempts }, 'bubblewrap failed to set up a sandbox: the command did not run');
  const stoppedByFloor = disk.note();
  const output = formatRunOutput(result, {
    timeoutSeconds,
    maxOutputChars: MAX_OUTPUT_CHARS,
    ...(confined ? { maxFileMb: context.settings.sandboxMaxFileMb } : {}),
    ...(stoppedByFloor === undefined ? {} : { guardNote: stoppedByFloor }),
  });
  const notes = [...(restored.length === 0 ? [] : [restoredNote(restored)]), ...censusNotes(census), ...gitlinkNotes(gitlinkReport)];
  const text = [output, ...notes].join('\n');
  const gitlinksUndone = gitlinkReport.removed.length > 0 || gitlinkReport.unreadable.length > 0;
  const metadata = {
    exit_code: result.exitCode,
    timed_out: result.stopped === 'timeout',
    ...(stoppedByFloor === undefined ? {} : { below_disk_floor: true }),
    truncated: result.truncated,
    confined,
    cwd: checked.cwd,
    ...(restored.length === 0 ? {} : { restored_protected_files: restored }),
    ...(census.removed.length === 0 ? {} : { removed_from_new_repositories: census.removed }),
    ...(census.overCap ? { too_many_directories: true } : {}),
    ...(gitlinkReport.removed.length === 0 ? {} : { removed_gitlinks: gitlinkReport.removed }),
    ...(gitlinkReport.headMoved.length === 0 ? {} : { gitlink_committed_in: gitlinkReport.headMoved }),
    ...(gitlinkReport.unreadable.length === 0 ? {} : { unchecked_indexes: gitlinkReport.unreadable }),
  };
  const undone = restored.length > 0 || census.removed.length > 0 || gitlinksUndone || census.overCap;
  return runSucceeded(result) && !undone ? succeed(text, metadata) : fail(text, metadata);
}
