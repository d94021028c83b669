import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { processDir } from '../../util/process-dir.js';
import type { SandboxStatus } from './sandbox-status.js';

/*
 * `bash`'s own network: bubblewrap makes a new network namespace (only its own loopback) and
 * slirp4netns gives it a user-mode uplink through the service's sockets. `--disable-host-loopback`
 * refuses the one address (10.0.2.2) slirp would otherwise map to the host's 127.0.0.1, and the
 * namespace's own 127.0.0.1 and abstract unix sockets are not the host's. So the internet stays
 * reachable and the service's keyless API, loopback databases and abstract sockets do not.
 */

/** What bubblewrap waits on before the command (`--block-fd`); its status comes on STATUS_FD (sandbox-status.ts). */
export const BLOCK_FD = 4;
/** The resolver slirp4netns answers on inside the namespace; it asks the host's, loopback ones included. */
const SLIRP_DNS = '10.0.2.3';

/**
 * The namespace's resolv.conf: slirp's resolver, with the host's search and options lines. The
 * host's own nameserver may be a loopback address (127.0.0.53) that means nothing inside.
 */
export function stageResolvConf(hostResolvConf = '/etc/resolv.conf'): string {
  // One file per process and host file: the same bytes for every service (tests open hundreds).
  const known = stagedResolvConfs.get(hostResolvConf);
  if (known !== undefined) return known;
  const staged = writeResolvConf(hostResolvConf);
  stagedResolvConfs.set(hostResolvConf, staged);
  return staged;
}

const stagedResolvConfs = new Map<string, string>();

function writeResolvConf(hostResolvConf: string): string {
  let kept: string[] = [];
  try {
    kept = readFileSync(hostResolvConf, 'utf8')
      .split('\n')
      .filter((line) => /^\s*(search|domain|options)\s/.test(line));
  } catch {
    // No host resolver configuration: slirp's resolver alone.
  }
  // In the process's own directory, which goes with the process however it ends (process-dir.ts).
  const dir = mkdtempSync(join(processDir(), 'resolv-'));
  const path = join(dir, 'resolv.conf');
  writeFileSync(path, [`nameserver ${SLIRP_DNS}`, ...kept, ''].join('\n'), { mode: 0o644 });
  return path;
}

/**
 * Connects a bubblewrap child started with `--json-status-fd`/`--block-fd` to a slirp4netns uplink,
 * then lets its command run. Resolves whether the uplink came up. Fails closed: if slirp4netns
 * cannot start, the command still runs, with no network at all, never with the host's. slirp4netns
 * ends with the child, on the service's exit (its exit pipe closes) and with the process groups
 * `track` hands its pid to (timeout, cancel).
 */
export function connectUserNetwork(child: ChildProcess, status: SandboxStatus, slirpPath: string, track: (pid: number) => void): Promise<boolean> {
  const block = child.stdio[BLOCK_FD] as Writable | null | undefined;
  let exited = false;
  return new Promise((resolve) => {
    let released = false;
    const release = (up: boolean): void => {
      if (released) return;
      released = true;
      block?.end('1');
      resolve(up);
    };
    if (!block) return release(false);
    block.on('error', () => {});
    let slirp: ChildProcess | undefined;
    child.once('exit', () => {
      exited = true;
      slirp?.kill('SIGKILL');
      release(false);
    });
    void status.childPid.then(async (pid) => {
      if (pid === undefined || !(await loopbackConfigured(pid, () => exited || released))) return release(false);
      if (released) return;
      const userns = process.getuid?.() === 0 ? [] : [`--userns-path=/proc/${pid}/ns/user`];
      // slirp4netns parses every packet the sandbox sends, outside it: its own sandbox (a mount
      // namespace of its own, capabilities dropped) and seccomp filter confine a bug in that parser.
      const confined = ['--enable-sandbox', '--enable-seccomp'];
      slirp = spawn(slirpPath, ['--configure', '--mtu=65520', '--disable-host-loopback', ...confined, `--ready-fd=3`, `--exit-fd=4`, ...userns, String(pid), 'tap0'], {
        stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'],
        detached: true,
        env: {},
      });
      if (slirp.pid !== undefined) track(slirp.pid);
      const ready = slirp.stdio[3] as Readable | null;
      ready?.on('error', () => {});
      ready?.once('data', () => release(true));
      (slirp.stdio[4] as Writable | null)?.on('error', () => {});
      slirp.once('exit', () => release(false));
      slirp.once('error', () => release(false));
    });
  });
}

const LOOPBACK_WAIT_MS = 30_000;
const LOOPBACK_LIMIT = 16 * 1024;

/**
 * Waits until bubblewrap has given the new namespace its loopback address, or `gone()`.
 *
 * bubblewrap reports the sandbox's pid before the sandbox sets itself up, and one of the first
 * steps is adding 127.0.0.1 to `lo` with "fail if it exists". slirp4netns `--configure` brings `lo`
 * up, and the kernel then adds that address itself: if slirp4netns got there first (a busy host),
 * bubblewrap died with "loopback: Failed RTM_NEWADDR" before the command ran. Nothing else
 * touches the namespace before slirp4netns starts, so the address showing in the namespace's
 * routing table means bubblewrap's step is done. The kernel offers no event for it: a short poll.
 */
async function loopbackConfigured(pid: number, gone: () => boolean): Promise<boolean> {
  const deadline = Date.now() + LOOPBACK_WAIT_MS;
  for (let wait = 1; !gone() && Date.now() < deadline; wait = Math.min(wait * 2, 50)) {
    const table = await readHead(`/proc/${pid}/net/fib_trie`);
    if (table === undefined) return false;
    if (table.includes('127.0.0.1')) return true;
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  return false;
}

/** The first bytes of a /proc file, or undefined once the process is gone. */
async function readHead(path: string): Promise<string | undefined> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(LOOPBACK_LIMIT);
    const { bytesRead } = await handle.read(buffer, 0, LOOPBACK_LIMIT, null);
    return buffer.subarray(0, bytesRead).toString('latin1');
  } catch {
    return undefined;
  } finally {
    await handle?.close();
  }
}
