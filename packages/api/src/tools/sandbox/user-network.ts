import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

/*
 * `bash`'s own network: bubblewrap makes a new network namespace (only its own loopback) and
 * slirp4netns gives it a user-mode uplink through the service's sockets. `--disable-host-loopback`
 * refuses the one address (10.0.2.2) slirp would otherwise map to the host's 127.0.0.1, and the
 * namespace's own 127.0.0.1 and abstract unix sockets are not the host's. So the internet stays
 * reachable and the service's keyless API, loopback databases and abstract sockets do not.
 */

/** Where bubblewrap writes the sandbox's pid (`--info-fd`), and what it waits on before the command (`--block-fd`). */
export const INFO_FD = 3;
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
  const dir = mkdtempSync(join(tmpdir(), 'mada-resolv-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'resolv.conf');
  writeFileSync(path, [`nameserver ${SLIRP_DNS}`, ...kept, ''].join('\n'), { mode: 0o644 });
  return path;
}

/**
 * Connects a bubblewrap child started with `--info-fd`/`--block-fd` to a slirp4netns uplink, then
 * lets its command run. Resolves whether the uplink came up. Fails closed: if slirp4netns cannot
 * start, the command still runs, with no network at all, never with the host's. slirp4netns
 * ends with the child, on the service's exit (its exit pipe closes) and with the process groups
 * `track` hands its pid to (timeout, cancel).
 */
export function connectUserNetwork(child: ChildProcess, slirpPath: string, track: (pid: number) => void): Promise<boolean> {
  const info = child.stdio[INFO_FD] as Readable | null | undefined;
  const block = child.stdio[BLOCK_FD] as Writable | null | undefined;
  return new Promise((resolve) => {
    let released = false;
    const release = (up: boolean): void => {
      if (released) return;
      released = true;
      block?.end('1');
      resolve(up);
    };
    if (!info || !block) return release(false);
    info.on('error', () => {});
    block.on('error', () => {});
    let text = '';
    let slirp: ChildProcess | undefined;
    info.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const pid = /"child-pid":\s*(\d+)/.exec(text)?.[1];
      if (pid === undefined || slirp !== undefined) return;
      const userns = process.getuid?.() === 0 ? [] : [`--userns-path=/proc/${pid}/ns/user`];
      // slirp4netns parses every packet the sandbox sends, outside it: its own sandbox (a mount
      // namespace of its own, capabilities dropped) and seccomp filter confine a bug in that parser.
      const confined = ['--enable-sandbox', '--enable-seccomp'];
      slirp = spawn(slirpPath, ['--configure', '--mtu=65520', '--disable-host-loopback', ...confined, `--ready-fd=3`, `--exit-fd=4`, ...userns, pid, 'tap0'], {
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
    child.once('exit', () => {
      slirp?.kill('SIGKILL');
      release(false);
    });
  });
}
