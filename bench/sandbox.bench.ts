import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bashReadonlyTool } from '../packages/api/src/tools/bash-readonly.js';
import type { ToolContext } from '../packages/api/src/tools/tool.js';
import { interleavedMediansMs, overhead, type Bench } from './harness.js';
import { diskGuard } from '../packages/api/src/tools/sandbox/disk-guard.js';
import { contextFor, runTrue } from './sandbox-support.js';

/** `bash true` with what `bash` adds for the free-space floor: the statfs calls before, the watch while it runs. */
async function runTrueWatched(context: ToolContext): Promise<void> {
  const disk = await diskGuard({ statements: [{ first: { commands: [{ program: 'true', args: [], redirections: [], source: 'true' }] }, rest: [] }] }, context);
  if (disk.refusal !== undefined) throw new Error(disk.refusal);
  await runTrue(context, true, disk.guard);
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
    // The service's default floor (1 GiB or 1 %, 10,000 inodes) on the tree's file system and DATA_DIR's.
    const floor = await interleavedMediansMs(() => runTrue(sandboxed, true), () => runTrueWatched(sandboxed), 31);
    const [lsPlain, lsSandboxed, truePlain, trueSandboxed] = [ls.baselineMs, ls.subjectMs, bare.baselineMs, bare.subjectMs];
    return [
      overhead('bash_readonly ls, sandboxed (bubblewrap + prlimit)', 'the same tool call with SANDBOX_ENABLED=false', lsPlain, lsSandboxed, 1, 15),
      overhead('bash true, sandboxed (bubblewrap + prlimit)', 'true spawned by the same executor without a sandbox', truePlain, trueSandboxed, 1, 15),
      overhead('bash true, sandboxed, with the free-space floor (statfs before and while it runs)', 'bash true, sandboxed, without it', floor.baselineMs, floor.subjectMs, 1, 1),
      overhead('bash true, sandboxed with its own network (+ slirp4netns)', 'true spawned by the same executor without a sandbox', networked.baselineMs, networked.subjectMs, 1, 15),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
};

export default bench;
