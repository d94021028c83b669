import { chmodSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The suite's own check that no test leaves a process or a temporary directory behind (vitest
 * globalSetup). Every worker, and every process a test starts that keeps the environment, gets a
 * fresh TMPDIR of the suite's own; at the end any process still using it is ended, whatever is
 * left in it is removed with it, and both are listed (grouped by name) so the test that left them
 * can be found. Caches that tools keep in TMPDIR on purpose are not leftovers.
 *
 * It reports rather than fails for now: the first run of it found about 230 entries from some 20
 * kinds of set-up (the sandbox's staged /etc per process, start-up tests' directories, MCP
 * configs). With those cleaned up, LEFTOVERS=fail turns a leftover into a failed run.
 */

const CACHES = [/^tsx-\d+$/, /^node-compile-cache$/];

/** The parent of `pid`, from /proc/<pid>/stat (the field after the command's closing parenthesis). */
const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /s, '').split(' ')[1]);

/** The suite's own workers still running: children of this process that run vitest. */
function workers(): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (parentOf(pid) === process.pid && readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('vitest')) found.push(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

const WORKERS_WAIT_MS = 15_000;

/**
 * vitest runs this teardown before its last workers have exited (it stops a file's worker without
 * waiting): looking earlier finds what a worker is still removing, or a process it started that
 * ends with it. Bounded: vitest kills a worker that does not end.
 */
async function workersEnded(): Promise<void> {
  const deadline = Date.now() + WORKERS_WAIT_MS;
  while (workers().length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * Processes whose working directory, command line or TMPDIR lies in `root`: the suite's own
 * workers (children of this process) excepted.
 */
function processesUsing(root: string): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const command = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      const cwd = readlinkSync(`/proc/${pid}/cwd`);
      if (parentOf(pid) === process.pid && command.includes('vitest')) continue;
      if (cwd.startsWith(root) || command.includes(root) || environ.includes(`TMPDIR=${root}`)) found.push({ pid, command: command.slice(0, 200) });
    } catch {
      // Gone meanwhile, or another account's: not ours either way.
    }
  }
  return found;
}

export default function setup(): () => Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'mada-suite-'));
  // As /tmp lets them: tests that run a program as another account (PostgreSQL's initdb as
  // postgres) reach the directories they open up for it below this one.
  chmodSync(root, 0o755);
  process.env.TMPDIR = root;
  return async () => {
    await workersEnded();
    const processes = processesUsing(root);
    for (const { pid } of processes) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Ended meanwhile.
      }
    }
    const left = readdirSync(root).filter((name) => !CACHES.some((cache) => cache.test(name)));
    rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    if (processes.length === 0 && left.length === 0) return;
    // mkdtemp's six random characters dropped: one line per kind of directory.
    const kinds = new Map<string, number>();
    for (const name of left) {
      const kind = name.replace(/-[A-Za-z0-9]{6}$/, '');
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
    const lines = [
      ...processes.map(({ pid, command }) => `process ${pid} still running (ended now): ${command}`),
      ...[...kinds].sort((a, b) => b[1] - a[1]).map(([kind, count]) => `${count} × ${kind}-…`),
    ];
    const message = `the suite left ${processes.length} process(es) and ${left.length} temporary entr${left.length === 1 ? 'y' : 'ies'} behind (all removed now):\n${lines.join('\n')}`;
    if (process.env.LEFTOVERS !== 'fail') {
      process.stderr.write(`${message}\n`);
      return;
    }
    // vitest reports an error thrown here but keeps the run's exit status: set it too.
    process.exitCode = 1;
    throw new Error(message);
  };
}
