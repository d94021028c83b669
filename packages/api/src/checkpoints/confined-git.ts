import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { locateProgram } from '../tools/sandbox/exec/program-path.js';
import { isWithin } from '../tools/sandbox/paths.js';
import { bwrapArguments, type SandboxSpec } from '../tools/sandbox/bubblewrap.js';
import type { Usable } from '../tools/sandbox/launcher.js';
import { limitedCommand } from '../tools/sandbox/resource-limits.js';
import { SYSTEM_DIRECTORIES } from '../tools/sandbox/system-view.js';

/**
 * A snapshot's git run inside the sandbox. The run's `bash` (or a process it left behind) can
 * swap the working directory for a link to anywhere and back while git reads the tree: git given
 * the path would follow the link and hash what lies outside (another user's files, /etc) into the
 * snapshot, which `GET /runs/{id}/changes` then shows. Here git sees the working directory only
 * as the directory the service holds open, bound read-only through that descriptor, and the
 * shadow repository bound writable; besides those, only what the run's own `bash` sees (system
 * directories read-only, a scrubbed /etc). A link in the tree, swapped in at any moment, leads
 * nowhere the run could not already read.
 */

/** Where the held working directory appears inside the sandbox (git's work tree and current directory). */
export const CONFINED_WORK_TREE = '/mada/worktree';
/** The descriptor bwrap inherits the held directory as: the first after stdin, stdout and stderr. */
export const CONFINED_TREE_FD = 3;

/** How git reaches the tree it reads: through the sandbox, by the directory the service holds. */
export interface ConfinedTree {
  availability: Usable;
  /** The held working directory (working-dir-pin.ts). */
  dirFd: number;
}

export interface ConfinedLaunch {
  file: string;
  args: string[];
}

/** git threads (preload-index, status) count towards the pids limit. */
const MAX_PROCESSES = 64;

/**
 * bwrap's command line for `git ...gitArgs` over the held tree, with `gitDir` (a real path)
 * writable and git.ts's memory cap. No pids cgroup, unlike the tools' launcher: git runs with a
 * config of the service's making that names no program, so it starts none, and the cgroup's
 * shell costs a process per git command, of which a snapshot runs several.
 */
export function confinedGit(tree: ConfinedTree, gitDir: string, memoryBytes: number, gitArgs: readonly string[]): ConfinedLaunch {
  const git = locateProgram('git', process.env.PATH ?? '/usr/bin:/bin');
  if (git === undefined) throw new Error('git is not installed');
  const real = realpathSync(git);
  // A git installed outside the system directories (its libexec beside it) is shown read-only.
  const toolchains = SYSTEM_DIRECTORIES.some((system) => isWithin(system, real)) ? [] : [dirname(dirname(real))];
  const { availability } = tree;
  const inner = limitedCommand(availability.prlimitPath, { memoryMb: Math.ceil(memoryBytes / (1024 * 1024)), maxProcesses: MAX_PROCESSES }, [real, ...gitArgs]);
  const spec: SandboxSpec = {
    allowedPaths: [gitDir],
    writable: true,
    network: false,
    readOnlyPaths: [],
    // The staged /etc, should the shadow repository's directory hold it.
    hiddenPaths: [availability.etc],
    toolchains,
    tmpBytes: 1024 * 1024,
    boundDirectories: [{ fd: CONFINED_TREE_FD, target: CONFINED_WORK_TREE, readOnly: true }],
    etc: availability.etc,
    cwd: CONFINED_WORK_TREE,
  };
  return { file: availability.bwrapPath, args: bwrapArguments(spec, inner) };
}
