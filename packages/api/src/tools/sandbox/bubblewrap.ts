import { existsSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { bytePath, pathBytes } from '../../util/byte-path.js';
import { under } from './protected-snapshot.js';
import { isDirectory, isWithin } from './paths.js';
import { systemMounts, type Mount } from './system-view.js';
import { STATUS_FD } from './sandbox-status.js';
import { BLOCK_FD } from './user-network.js';

/** Where HOME points inside the sandbox: an empty directory in the private /tmp. */
export const SANDBOX_HOME = '/tmp/home';

/** What one sandboxed process may see, write and reach. */
export interface SandboxSpec {
  /** The allowed paths (real paths). */
  allowedPaths: readonly string[];
  /** Writable for `bash`; read-only for `bash_readonly` and the search tools. */
  writable: boolean;
  network: boolean;
  /**
   * With `network`: the namespace's own network, uplinked by slirp4netns (user-network.ts), and
   * the resolv.conf that points at slirp's resolver. Without it `network` shares the host's.
   */
  userNetwork?: { resolvConf: string };
  /**
   * bubblewrap reports on STATUS_FD (a pipe the caller opens) whether it started the command:
   * how a sandbox that failed to set itself up is told from a command that failed. Always with
   * `userNetwork`, whose uplink needs the sandbox's pid from it.
   */
  status?: boolean;
  /** Files and directories inside the allowed paths kept read-only (git config, hooks, `.env`). */
  readOnlyPaths: readonly string[];
  /**
   * More of them, as byte strings (util/byte-path.ts) whose bytes are not UTF-8: no text argument
   * names them, so they are bound through `--args` (argumentBytes), raw bytes on a descriptor.
   */
  readOnlyPathBytes?: readonly string[];
  /** Where the spawner puts a pipe carrying argumentBytes (ARGS_FD); without it those binds are left out. */
  argumentsFd?: number;
  /** Where the spawner puts a pipe carrying a seccomp program (SECCOMP_FD, setuid-filter.ts) that bubblewrap loads. */
  seccompFd?: number;
  /** Hidden even inside an allowed path: DATA_DIR, the database, the service's `.env`. */
  hiddenPaths: readonly string[];
  /** Shown read-only: toolchains found on PATH outside the system directories, SANDBOX_READ_PATHS (see toolchainPaths). */
  toolchains: readonly string[];
  /**
   * Directories bound by descriptor (inherited by bwrap as `fd`), never by path, writable unless
   * `readOnly`: a checkpoint revert writes into the working directory its run started in, and a
   * snapshot's git reads it, even when its path now leads elsewhere.
   */
  boundDirectories?: readonly { fd: number; target: string; readOnly?: boolean }[];
  /** The staged /etc (stageEtc). */
  etc: string;
  /** Size of the private /tmp (and so of HOME). */
  tmpBytes: number;
  cwd: string;
}


/** bubblewrap reads the binds no text can name from a pipe the spawner puts here (`--args`), after STATUS_FD and BLOCK_FD. */
export const ARGS_FD = 5;
/** bubblewrap reads the seccomp program of a writable sandbox from a pipe the spawner puts here (`--seccomp`). */
export const SECCOMP_FD = 6;

/** The real path of a byte-string path, as a byte string; none when it cannot be resolved. */
const realPathBytes = (path: string): string[] => {
  try {
    return [realpathSync.native(pathBytes(path), { encoding: 'buffer' }).toString('latin1')];
  } catch {
    return [];
  }
};

/**
 * The read-only binds of `readOnlyPathBytes`, NUL-separated as `--args` takes them: by real path and
 * only inside the allowed paths, as the text ones. Empty when there are none (or the spec is not
 * writable: read-only specs bind nothing writable to protect).
 */
export function argumentBytes(spec: Pick<SandboxSpec, 'readOnlyPathBytes' | 'allowedPaths' | 'writable'>): Buffer {
  if (!spec.writable || spec.readOnlyPathBytes === undefined) return Buffer.alloc(0);
  const roots = spec.allowedPaths.map(bytePath);
  const inside = spec.readOnlyPathBytes.flatMap(realPathBytes).filter((path) => roots.some((root) => under(root, path)));
  const words = [...new Set(inside)].flatMap((path) => ['--ro-bind', path, path]);
  return Buffer.concat(words.map((word) => Buffer.concat([pathBytes(word), Buffer.from([0])])));
}

const realPathOf = (path: string): string[] => {
  try {
    return [realpathSync(path)];
  } catch {
    return [];
  }
};

/** The hidden paths a process could otherwise reach: those inside something bound. */
function masks(spec: SandboxSpec, bound: readonly string[]): Mount[] {
  return spec.hiddenPaths
    .filter((hidden) => existsSync(hidden) && bound.some((path) => isWithin(path, hidden)))
    .map((hidden): Mount => (isDirectory(hidden) ? { kind: 'tmpfs', target: hidden, sizeBytes: 4096 } : { kind: 'mask-file', target: hidden }));
}

/**
 * The file-system view, built from an allowlist (never from `/`): system program and library
 * directories and a scrubbed /etc read-only, a fresh /proc and minimal /dev, a private /tmp with
 * HOME in it, toolchains and SANDBOX_READ_PATHS read-only, the allowed paths, then the protected
 * files read-only and the hidden paths masked. Later mounts cover earlier ones, so the order is the
 * policy.
 */
export function sandboxMounts(spec: SandboxSpec): Mount[] {
  const { toolchains } = spec;
  const mounts: Mount[] = [
    ...systemMounts(spec.etc),
    ...(spec.network && spec.userNetwork !== undefined && existsSync(join(spec.etc, 'resolv.conf'))
      ? [{ kind: 'ro-bind', source: spec.userNetwork.resolvConf, target: '/etc/resolv.conf' } satisfies Mount]
      : []),
    { kind: 'tmpfs', target: '/tmp', sizeBytes: spec.tmpBytes },
    { kind: 'dir', target: SANDBOX_HOME },
    ...toolchains.map((path): Mount => ({ kind: 'ro-bind', source: path, target: path })),
    ...spec.allowedPaths.map((path): Mount => ({ kind: spec.writable ? 'bind' : 'ro-bind', source: path, target: path })),
    ...(spec.boundDirectories ?? []).map(({ fd, target, readOnly }): Mount => ({ kind: 'bind-fd', fd, target, ...(readOnly === true ? { readOnly } : {}) })),
  ];
  if (spec.writable) {
    // By real path and only inside the allowed paths: a link planted as `.git/hooks` must not
    // bind whatever it points at into view.
    const inside = spec.readOnlyPaths.flatMap(realPathOf).filter((path) => spec.allowedPaths.some((root) => isWithin(root, path)));
    mounts.push(...[...new Set(inside)].map((path): Mount => ({ kind: 'ro-bind', source: path, target: path })));
  }
  mounts.push(...masks(spec, [...toolchains, ...spec.allowedPaths]));
  return mounts;
}

function mountArguments(mount: Mount): string[] {
  switch (mount.kind) {
    case 'ro-bind':
      return ['--ro-bind', mount.source, mount.target];
    case 'bind':
      return ['--bind', mount.source, mount.target];
    case 'bind-fd':
      // Through bubblewrap's own /proc/self/fd, not `--bind-fd` (bubblewrap 0.8 and later only):
      // it resolves the descriptor's link to the directory held, wherever its name now leads.
      return [mount.readOnly === true ? '--ro-bind' : '--bind', `/proc/self/fd/${mount.fd}`, mount.target];
    case 'symlink':
      return ['--symlink', mount.linkTarget, mount.target];
    case 'tmpfs':
      return [...(mount.sizeBytes === undefined ? [] : ['--size', String(mount.sizeBytes)]), '--tmpfs', mount.target];
    case 'dir':
      return ['--dir', mount.target];
    case 'mask-file':
      return ['--ro-bind', '/dev/null', mount.target];
  }
}

/**
 * A fresh /proc and a minimal /dev, narrowed where bubblewrap leaves them open to the host.
 *
 * `/proc/sys` read-only: a service running as root maps its uid 0 to the sandbox's, and the kernel
 * lets the host's uid 0 write its global settings without any capability (the mode bits alone).
 * bubblewrap covers `/proc/sys` only when the directory itself is writable, which it never is, so
 * `kernel.core_pattern` (a `|program` run as the host's root at the next crash) was the command's to
 * set. The host's `/proc/sys` bound read-only over the new one reads the same (network settings
 * follow the reader's namespace) and, once covered, the mount is locked for nested namespaces.
 *
 * `/dev` read-only and `/dev/shm` its own tmpfs of the /tmp size: bubblewrap's /dev is a writable
 * tmpfs with the kernel's default size, half the host's memory, which a command could fill.
 */
function kernelSurfaceArguments(spec: SandboxSpec): string[] {
  return [
    '--ro-bind', '/proc/sys', '/proc/sys',
    '--dev', '/dev',
    '--size', String(spec.tmpBytes), '--tmpfs', '/dev/shm',
    '--remount-ro', '/dev',
  ];
}

/** The host's network, or a namespace of its own that the caller uplinks before the command runs. */
function networkArguments(spec: SandboxSpec): string[] {
  if (!spec.network) return [];
  if (spec.userNetwork === undefined) return ['--share-net'];
  return ['--block-fd', String(BLOCK_FD)];
}

const statusArguments = (spec: SandboxSpec): string[] =>
  spec.status === true || (spec.network && spec.userNetwork !== undefined) ? ['--json-status-fd', String(STATUS_FD)] : [];

/**
 * bubblewrap's arguments for one process: the view of sandboxMounts, every namespace new (user,
 * PID, IPC, UTS, mount, cgroup; the network unless allowed), no capabilities (a root service's
 * commands could otherwise remount what is read-only), death with the service, and an environment
 * of only what the caller passes plus HOME and TMPDIR pointing into the private /tmp.
 *
 * No `--new-session`: every caller spawns bwrap as the leader of a session of its own (detached),
 * so there is no terminal to inject into, and the namespace's init must stay in that process group.
 * bubblewrap arms the init's parent-death signal only after the mounts are made; a stop that ends
 * the outer bwrap before then reaches the sandbox only through the group.
 */
export function bwrapArguments(spec: SandboxSpec, command: readonly string[]): string[] {
  return [
    ...sandboxMounts(spec).flatMap(mountArguments),
    // After the allowed paths' binds, which they must cover; bubblewrap reads them here, in order.
    ...(spec.argumentsFd === undefined ? [] : ['--args', String(spec.argumentsFd)]),
    '--proc', '/proc',
    ...kernelSurfaceArguments(spec),
    '--unshare-all',
    ...networkArguments(spec),
    ...statusArguments(spec),
    ...(spec.seccompFd === undefined ? [] : ['--seccomp', String(spec.seccompFd)]),
    '--cap-drop', 'ALL',
    '--die-with-parent',
    '--setenv', 'HOME', SANDBOX_HOME,
    '--setenv', 'TMPDIR', '/tmp',
    '--chdir', spec.cwd,
    '--',
    ...command,
  ];
}
