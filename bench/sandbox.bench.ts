import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bashReadonlyTool } from '../packages/api/src/tools/bash-readonly.js';
import { childEnvironment } from '../packages/api/src/tools/sandbox/exec/environment.js';
import { locateProgram } from '../packages/api/src/tools/sandbox/exec/program-path.js';
import { runScript } from '../packages/api/src/tools/sandbox/exec/run-script.js';
import { PathSandbox } from '../packages/api/src/tools/sandbox/paths.js';
import { toolSandbox } from '../packages/api/src/tools/sandbox/tool-sandbox.js';
import type { ToolContext, ToolSettings } from '../packages/api/src/tools/tool.js';
import { createToolHost } from '../packages/api/src/tools/tool-host.js';
import { interleavedMediansMs, overhead, type Bench, type BenchResult } from './harness.js';

const settings = (sandboxEnabled: boolean, sandboxNetwork = false): ToolSettings => ({
  toolTimeoutSeconds: 60,
  sandboxEnabled,
  sandboxNetwork,
  sandboxMemoryMb: 2048,
  sandboxMaxProcesses: 256,
  sandboxReadPaths: [],
  maxWriteBytes: 1_000_000,
  searchEngineUrl: 'http://127.0.0.1:9',
  searchEngineTimeout: 1,
  retryMaxAttempts: 1,
  retryBaseDelay: 0,
  retryMaxDelay: 0,
});

/** One host for every context, as one service has: the sandbox is probed once. */
const host = createToolHost();

function contextFor(root: string, sandboxEnabled: boolean, sandboxNetwork = false): ToolContext {
  return { workingDir: root, sandbox: new PathSandbox([root]), settings: settings(sandboxEnabled, sandboxNetwork), host, signal: new AbortController().signal };
}

/** `bash true` at the executor: the policy has no `true`, and the launcher is what is measured. */
async function runTrue(context: ToolContext, sandboxed: boolean): Promise<void> {
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
    });
    if (result.exitCode !== 0) throw new Error(`true failed: ${result.output}`);
  } finally {
    launcher?.dispose();
  }
}

/** What `bash` adds around each command for the repositories under the allowed paths (repository-census.ts). */
async function censused(context: ToolContext, command: () => Promise<void>): Promise<void> {
  const refusal = await context.host.repositories.admit(context.sandbox);
  if (refusal !== undefined) throw new Error(refusal);
  const guard = await context.host.repositories.watch(context.sandbox);
  await command().finally(async () => {
    const report = await guard.check([]);
    if (report.restored.length + report.removed.length > 0) console.error('the census undid something in an untouched tree');
  });
}

/** 16,000 files in 1,000 directories (16 each, 40 directories per top-level one). */
function largeTree(root: string): void {
  for (let d = 0; d < 1000; d++) {
    const dir = join(root, `d${Math.floor(d / 40)}`, `e${d}`);
    mkdirSync(dir, { recursive: true });
    for (let f = 0; f < 16; f++) writeFileSync(join(dir, `f${f}.txt`), 'x\n');
  }
}

/** 200 repositories side by side, each laid out as `git init` does (config, HEAD, objects, refs, sample hooks). */
function manyRepositories(root: string): void {
  const samples = ['applypatch-msg', 'commit-msg', 'post-update', 'pre-applypatch', 'pre-commit', 'pre-push', 'pre-rebase', 'pre-receive', 'prepare-commit-msg', 'update'];
  for (let r = 0; r < 200; r++) {
    const git = join(root, 'packages', `p${r}`, '.git');
    for (const dir of ['hooks', 'objects/info', 'objects/pack', 'refs/heads', 'refs/tags', 'info']) mkdirSync(join(git, dir), { recursive: true });
    writeFileSync(join(git, 'HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(git, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n');
    for (const hook of samples) writeFileSync(join(git, 'hooks', `${hook}.sample`), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    writeFileSync(join(root, 'packages', `p${r}`, 'index.js'), 'module.exports = 1;\n');
  }
}

async function treeCosts(label: string, fill: (root: string) => void): Promise<BenchResult[]> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-census-')));
  try {
    fill(root);
    const open = contextFor(root, false);
    const sandboxed = contextFor(root, true);
    // Nothing cached from an earlier tree or run: the first command's walk as a new service does it.
    host.repositories.forget();
    const first = performance.now();
    await host.repositories.watch(sandboxed.sandbox).then((guard) => guard.check([]));
    const firstMs = performance.now() - first;
    // A check takes a few milliseconds, so many more of them: a median of 31 moved with each burst of other work.
    const census = await interleavedMediansMs(() => undefined, () => censused(sandboxed, () => Promise.resolve()), 301);
    const bare = await interleavedMediansMs(() => runTrue(open, false), () => censused(sandboxed, () => runTrue(sandboxed, true)), 31);
    return [
      overhead(`repository census per bash command, ${label}`, 'nothing', census.baselineMs, census.subjectMs, 1, 5, `the first command's walk of the tree: ${firstMs.toFixed(1)} ms`),
      overhead(`bash true, sandboxed, with the repository census, ${label}`, 'true spawned by the same executor without a sandbox', bare.baselineMs, bare.subjectMs, 1, 15),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function runLs(context: ToolContext): Promise<void> {
  const result = await bashReadonlyTool.execute(bashReadonlyTool.parameters.parse({ command: 'ls' }), context);
  if (!result.success) throw new Error(result.error);
}

const bench: Bench = async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-sandbox-')));
  try {
    mkdirSync(join(root, 'src'));
    for (let i = 0; i < 20; i++) writeFileSync(join(root, `file${i}.txt`), 'x\n');
    const open = contextFor(root, false);
    const sandboxed = contextFor(root, true);
    // In turns: a start-up cost of a few milliseconds is smaller than what other work on the
    // machine adds from one second to the next, so both sides must see the same moments.
    const ls = await interleavedMediansMs(() => runLs(open), () => runLs(sandboxed), 31);
    const bare = await interleavedMediansMs(() => runTrue(open, false), () => runTrue(sandboxed, true), 31);
    // SANDBOX_NETWORK=true: a network namespace of its own and its slirp4netns uplink, if installed.
    const networked = await interleavedMediansMs(() => runTrue(open, false), () => runTrue(contextFor(root, true, true), true), 31);
    const [lsPlain, lsSandboxed, truePlain, trueSandboxed] = [ls.baselineMs, ls.subjectMs, bare.baselineMs, bare.subjectMs];
    return [
      overhead('bash_readonly ls, sandboxed (bubblewrap + prlimit)', 'the same tool call with SANDBOX_ENABLED=false', lsPlain, lsSandboxed, 1, 15),
      overhead('bash true, sandboxed (bubblewrap + prlimit)', 'true spawned by the same executor without a sandbox', truePlain, trueSandboxed, 1, 15),
      overhead('bash true, sandboxed with its own network (+ slirp4netns)', 'true spawned by the same executor without a sandbox', networked.baselineMs, networked.subjectMs, 1, 15),
      ...(await treeCosts('16,000 files in 1,000 directories', largeTree)),
      ...(await treeCosts('200 nested repositories', manyRepositories)),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
};

export default bench;
