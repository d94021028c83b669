import { tmpdir } from 'node:os';
import { childEnvironment } from '../packages/api/src/tools/sandbox/exec/environment.js';
import { locateProgram } from '../packages/api/src/tools/sandbox/exec/program-path.js';
import { runScript, type RunOptions } from '../packages/api/src/tools/sandbox/exec/run-script.js';
import { PathSandbox } from '../packages/api/src/tools/sandbox/paths.js';
import { toolSandbox } from '../packages/api/src/tools/sandbox/tool-sandbox.js';
import type { ToolContext, ToolSettings } from '../packages/api/src/tools/tool.js';
import { createToolHost } from '../packages/api/src/tools/tool-host.js';

/* What sandbox.bench.ts and census.bench.ts share: the settings, one host, `bash true` at the executor. */

export const settings = (sandboxEnabled: boolean, sandboxNetwork = false): ToolSettings => ({
  toolTimeoutSeconds: 60,
  sandboxEnabled,
  sandboxNetwork,
  sandboxMemoryMb: 2048,
  sandboxMaxProcesses: 256,
  sandboxMaxFileMb: 1024,
  // The service's defaults: the floor's cost is part of what a command costs.
  sandboxMinFreeMb: 1024,
  sandboxMinFreePercent: 1,
  sandboxMinFreeInodes: 10_000,
  dataDir: tmpdir(),
  sandboxReadPaths: [],
  allowedPaths: [],
  workspacesDir: '',
  maxWriteBytes: 1_000_000,
  searchEngineUrl: 'http://127.0.0.1:9',
  searchEngineTimeout: 1,
  retryMaxAttempts: 1,
  retryBaseDelay: 0,
  retryMaxDelay: 0,
});

/** One host for every context, as one service has: the sandbox is probed once. */
export const host = createToolHost();

export function contextFor(root: string, sandboxEnabled: boolean, sandboxNetwork = false): ToolContext {
  return { workingDir: root, sandbox: new PathSandbox([root]), settings: settings(sandboxEnabled, sandboxNetwork), host, signal: new AbortController().signal };
}

/** `bash true` at the executor: the policy has no `true`, and the launcher is what is measured. */
export async function runTrue(context: ToolContext, sandboxed: boolean, guard?: RunOptions<unknown>['guard']): Promise<void> {
  const env = childEnvironment(process.env, context.sandbox.roots);
  const searchPath = env.PATH as string;
  const truePath = locateProgram('true', searchPath) as string;
  const { launcher } = sandboxed ? await toolSandbox(context, 'write', searchPath, context.workingDir) : {};
  const script = { statements: [{ first: { commands: [{ program: 'true', executable: truePath, argv: ['true'], redirections: [] }] }, rest: [] }] };
  try {
    const result = await runScript(script, {
      cwd: context.workingDir,
      env,
      timeoutMs: 10_000,
      prepare: (command) => command,
      locate: (name) => locateProgram(name, searchPath),
      ...(launcher === undefined ? {} : { launcher: (invocation) => launcher.launch(invocation.executable, invocation.argv.slice(1), context.workingDir) }),
      ...(guard === undefined ? {} : { guard }),
    });
    if (result.exitCode !== 0) throw new Error(`true failed: ${result.output}`);
  } finally {
    launcher?.dispose();
  }
}
