import { spawn, type ChildProcess } from 'node:child_process';
import { isAbsolute } from 'node:path';
import { childEnvironment, safeSearchPath } from '../tools/sandbox/exec/environment.js';
import { ProcessGroups } from '../tools/sandbox/exec/process-groups.js';
import { locateProgram } from '../tools/sandbox/exec/program-path.js';
import type { PathSandbox } from '../tools/sandbox/paths.js';
import { readSandboxStatus } from '../tools/sandbox/sandbox-status.js';
import { feedArguments, sandboxStdio } from '../tools/sandbox/sandbox-stdio.js';
import { toolSandbox, type SandboxMode } from '../tools/sandbox/tool-sandbox.js';
import { connectUserNetwork } from '../tools/sandbox/user-network.js';
import type { ToolSettings } from '../tools/tool.js';
import type { ToolHost } from '../tools/tool-host.js';
import type { StdioServerConfig } from './config.js';

/** How long a server stopped by the service gets to exit after SIGTERM before its sandbox is killed. */
const STOP_GRACE_MS = 2000;
/** What is kept of a server's stderr, for the reason it died (never shown whole: it may print secrets). */
const STDERR_TAIL = 2048;

/** A stdio MCP server's process: its pipes, how it ended, and how to end it with everything it started. */
export interface ServerProcess {
  child: ChildProcess & { stdin: NonNullable<ChildProcess['stdin']>; stdout: NonNullable<ChildProcess['stdout']> };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last bytes the server wrote on stderr. */
  stderrTail(): string;
  stop(): Promise<void>;
}

export class ServerStartError extends Error {
  override readonly name = 'ServerStartError';
}

/**
 * Starts a stdio server the way `bash` starts a command: inside the sandbox (bubblewrap's view of
 * the user's workspace, writable with `write` access and read-only with `read`, as `bash_readonly`
 * sees it; network per SANDBOX_NETWORK either way; the memory and process limits), in
 * a process group of its own, with the allowlisted environment plus the server's own `env`.
 * Stopping ends the whole sandbox, so nothing the server started outlives it.
 */
export async function startServerProcess(
  server: StdioServerConfig,
  workspace: PathSandbox,
  settings: ToolSettings,
  host: ToolHost,
  access: SandboxMode,
): Promise<ServerProcess> {
  const roots = workspace.roots;
  const cwd = roots[0];
  if (cwd === undefined) throw new ServerStartError('the user has no workspace path to run it in');
  const searchPath = safeSearchPath(process.env.PATH, roots);
  const executable = isAbsolute(server.command) ? server.command : locateProgram(server.command, searchPath);
  if (executable === undefined) throw new ServerStartError(`${server.command}: command not found`);
  const { availability, launcher } = await toolSandbox({ sandbox: workspace, settings, host }, access, searchPath, cwd, { network: true });
  if (availability.state === 'unavailable') throw new ServerStartError(`stdio MCP servers need the sandbox (bubblewrap), which is not available: ${availability.reason}`);
  const launch = launcher?.launch(executable, server.args, cwd, { status: true, argumentBytes: true }) ?? { file: executable, args: [...server.args] };
  const child = spawn(launch.file, launch.args, {
    cwd,
    env: { ...childEnvironment(process.env, roots), ...server.env },
    stdio: ['pipe', 'pipe', 'pipe', ...sandboxStdio(launch)],
    detached: true,
  });
  const groups = new ProcessGroups(STOP_GRACE_MS);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', () => resolve({ code: null, signal: null }));
  });
  if (child.pid !== undefined) groups.add(child.pid);
  feedArguments(child, launch);
  const status = launch.status === true ? readSandboxStatus(child) : undefined;
  if (status !== undefined && child.pid !== undefined) groups.sandbox(child.pid, status.childPid, exited);
  if (launch.userNetwork !== undefined && status !== undefined) void connectUserNetwork(child, status, launch.userNetwork, (pid) => groups.add(pid));
  let tail = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-STDERR_TAIL);
  });
  child.stdin?.on('error', () => {});
  void exited.then(() => {
    groups.dispose();
    launcher?.dispose();
  });
  if (child.stdin === null || child.stdout === null) throw new ServerStartError('its pipes could not be opened');
  return {
    child: child as ServerProcess['child'],
    exited,
    stderrTail: () => tail,
    async stop() {
      child.stdin?.end();
      groups.stop('abort');
      await exited;
    },
  };
}
