import { mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The suite's own check that no test leaves a process or a temporary directory behind (vitest
 * globalSetup). Every worker, and every process a test starts that keeps the environment, gets a
 * fresh TMPDIR of the suite's own; at the end whatever is still in it, and any process still
 * using it, is named, ended, and fails the run. Caches that tools keep in TMPDIR on purpose are
 * not leftovers.
 */

const CACHES = [/^tsx-\d+$/, /^node-compile-cache$/];

/** The parent of `pid`, from /proc/<pid>/stat (the field after the command's closing parenthesis). */
const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /s, '').split(' ')[1]);

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

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), 'mada-suite-'));
  process.env.TMPDIR = root;
  return () => {
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
    const problems = [
      ...processes.map(({ pid, command }) => `process ${pid} still running: ${command}`),
      ...left.map((name) => `temporary entry left behind: ${name}`),
    ];
    if (problems.length === 0) return;
    // vitest reports an error thrown here but keeps the run's exit status: set it too.
    process.exitCode = 1;
    throw new Error(`the suite left ${problems.length} thing(s) behind:\n${problems.join('\n')}`);
  };
}
