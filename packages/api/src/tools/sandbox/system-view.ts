import { existsSync, lstatSync, readlinkSync } from 'node:fs';
import { chmod, cp, lstat, mkdir, mkdtemp, readdir, realpath, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, delimiter, dirname, isAbsolute, join, resolve } from 'node:path';
import { processDir } from '../../util/process-dir.js';
import { isWithin } from './paths.js';

/** One entry of the file-system view, in bubblewrap's terms. */
export type Mount =
  | { kind: 'ro-bind'; source: string; target: string }
  | { kind: 'bind'; source: string; target: string }
  /** A directory the caller holds open (inherited as `fd`), bound writable unless `readOnly`: what it is, not what a path leads to. */
  | { kind: 'bind-fd'; fd: number; target: string; readOnly?: boolean }
  | { kind: 'symlink'; linkTarget: string; target: string }
  | { kind: 'tmpfs'; target: string; sizeBytes?: number }
  | { kind: 'dir'; target: string }
  /** /dev/null bound over a file: it reads as empty and cannot be written. */
  | { kind: 'mask-file'; target: string };

/** Where the system keeps programs and libraries: shown read-only, as links when the host has links. */
export const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * The /etc entries programs need to run (users and groups by name, name resolution, the dynamic
 * linker, certificates, time zone, alternatives, locales). Everything else in /etc is absent:
 * shadow files, sudoers, SSH host keys, the system gitconfig, the service's own configuration.
 */
export const ETC_ENTRIES = [
  'passwd', 'group', 'hosts', 'hostname', 'resolv.conf', 'nsswitch.conf', 'host.conf', 'services', 'protocols',
  'ld.so.cache', 'ld.so.conf', 'ld.so.conf.d', 'ssl', 'ca-certificates', 'ca-certificates.conf', 'pki',
  'crypto-policies', 'alternatives', 'localtime', 'timezone', 'locale.alias', 'locale.conf', 'default/locale',
  'mime.types', 'magic', 'os-release', 'debian_version', 'terminfo', 'inputrc',
];

const isDirectory = async (path: string): Promise<boolean> => {
  try {
    return (await stat(path)).isDirectory();
  } catch {
    return false;
  }
};

/** The real path, or undefined when the path does not exist (or cannot be resolved). */
const realPathOf = async (path: string): Promise<string | undefined> => {
  try {
    return await realpath(path);
  } catch {
    return undefined;
  }
};

/**
 * A copy of the /etc entries programs need, made once per service process in a directory of its
 * own and shown as the sandbox's /etc with one mount instead of one per entry (each mount costs
 * start-up time on every command). Links are copied as links: those into /usr resolve inside.
 * Asynchronous: copying the certificate store takes most of a second on a busy machine, which
 * must not stall requests in flight when the first tool call asks for the sandbox.
 */
export function stageEtc(): Promise<string> {
  // One copy per process: it holds the host's own files and decides nothing, and a copy per
  // service (tests open hundreds) cost most of a second and a directory left in /tmp each.
  stagedEtc ??= copyEtc().catch((error: unknown) => {
    stagedEtc = undefined;
    throw error;
  });
  return stagedEtc;
}

let stagedEtc: Promise<string> | undefined;

async function copyEtc(): Promise<string> {
  // In the process's own directory, which goes with the process however it ends (process-dir.ts).
  const staged = await mkdtemp(join(processDir(), 'etc-'));
  for (const entry of ETC_ENTRIES) {
    const source = join('/etc', entry);
    if (!existsSync(source)) continue;
    const target = join(staged, entry);
    await mkdir(dirname(target), { recursive: true });
    // The entry itself through its real path (resolv.conf may link into /run); below it, verbatim.
    // Never a private key directory (/etc/ssl/private, /etc/pki/tls/private).
    const filter = (path: string): boolean => !path.split('/').includes('private');
    await cp(await realpath(source), target, { recursive: true, verbatimSymlinks: true, dereference: false, filter });
  }
  await chmod(staged, 0o755);
  return staged;
}

/** System directories as the host has them: a link stays a link (`/bin -> usr/bin`), a directory is bound read-only. */
export function systemMounts(etc: string): Mount[] {
  const mounts: Mount[] = [];
  for (const dir of SYSTEM_DIRECTORIES) {
    let stats;
    try {
      stats = lstatSync(dir);
    } catch {
      continue;
    }
    if (stats.isSymbolicLink()) mounts.push({ kind: 'symlink', linkTarget: readlinkSync(dir), target: dir });
    else if (stats.isDirectory()) mounts.push({ kind: 'ro-bind', source: dir, target: dir });
  }
  mounts.push({ kind: 'ro-bind', source: etc, target: '/etc' });
  return mounts;
}

const isSystemPath = (path: string): boolean => SYSTEM_DIRECTORIES.some((dir) => isWithin(dir, path));

/** Too broad to bind: `/`, a top-level directory, a home directory or anything above one. */
function tooBroad(path: string): boolean {
  if (path.split('/').filter((part) => part !== '').length < 2) return true;
  const home = homedir();
  return isWithin(path, home) || path === dirname(home);
}

/** Parts of an installation prefix (`<prefix>/bin` on PATH: nvm's node, /opt/<tool>). */
const PREFIX_PARTS = ['bin', 'lib', 'lib64', 'libexec', 'include'];

/** The read-only directories an interpreter found in `dir` (a PATH entry) needs. */
async function prefixParts(dir: string): Promise<string[]> {
  const found = [dir];
  for (let up = dirname(dir), depth = 0; depth < 3 && up !== '/'; up = dirname(up), depth++) {
    // A version manager's root (pyenv, rbenv, nodenv): its shims need all of it, and it holds only toolchains.
    if ((await isDirectory(join(up, 'versions'))) && (await isDirectory(join(up, 'libexec')))) {
      found.push(up);
      break;
    }
  }
  if (basename(dir) === 'bin' && (await isDirectory(join(dirname(dir), 'lib')))) found.push(...PREFIX_PARTS.map((part) => join(dirname(dir), part)));
  return found;
}

/** Installation prefixes that programs in `dir` link to (`/usr/local/bin/node -> /opt/node/bin/node`). */
async function linkedPrefixes(dir: string): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  // npm's `node_modules/.bin`: its programs need their package's dependencies too, which live
  // beside it, so the whole node_modules is the prefix (one mount instead of one per package).
  const modules = basename(dir) === '.bin' && basename(dirname(dir)) === 'node_modules' ? dirname(dir) : undefined;
  const prefixes = await Promise.all(
    names.map(async (name): Promise<string | undefined> => {
      const path = join(dir, name);
      try {
        if (!(await lstat(path)).isSymbolicLink()) return undefined;
        const real = await realpath(path);
        if (modules !== undefined && isWithin(modules, real)) return modules;
        const bin = dirname(real);
        const prefix = basename(bin) === 'bin' ? dirname(bin) : bin;
        // Into a home directory only through a PATH entry of its own (nvm, pyenv): never a guess.
        return !isSystemPath(real) && !isWithin(homedir(), real) ? prefix : undefined;
      } catch {
        return undefined;
      }
    }),
  );
  return prefixes.filter((prefix) => prefix !== undefined);
}

/**
 * The read-only directories for the programs on `searchPath` that live outside the system
 * directories (pyenv, nvm, cargo, /opt installations) and for `readPaths` (SANDBOX_READ_PATHS).
 * Never `/`, a top-level directory, or a home directory as a whole: only the toolchain inside it.
 * Paths inside `excluded` (the run's workspace, every user's territory, DATA_DIR), or holding
 * one, are left to their own rules; they are compared with their links resolved.
 * Asynchronous: a `node_modules/.bin` on PATH holds hundreds of links, and resolving them one
 * after the other on the event loop held every request for up to a second on a busy machine.
 */
export async function toolchainPaths(searchPath: string, readPaths: readonly string[], excluded: readonly string[]): Promise<string[]> {
  const candidates: string[] = [];
  for (const entry of searchPath.split(delimiter)) {
    if (!isAbsolute(entry) || !(await isDirectory(entry))) continue;
    const real = await realPathOf(entry);
    if (real === undefined) continue;
    if (!isSystemPath(real)) candidates.push(...(await prefixParts(real)));
    // The distribution's own bin directories hold thousands of entries and link only within /usr.
    if (!isSystemPath(real) || isWithin('/usr/local', real)) candidates.push(...(await linkedPrefixes(real)));
  }
  const fenced = (await Promise.all(excluded.map(async (path) => [path, (await realPathOf(path)) ?? path]))).flat();
  const chosen = new Set<string>();
  for (const candidate of candidates) {
    const real = await realPathOf(candidate);
    if (real === undefined || isSystemPath(real) || tooBroad(real) || fenced.some((path) => isWithin(path, real) || isWithin(real, path))) continue;
    chosen.add(real);
  }
  for (const path of readPaths) {
    const real = await realPathOf(resolve(path));
    if (real !== undefined) chosen.add(real);
  }
  return outermost([...chosen]);
}

/**
 * Drops every path inside another one of the list: its mount would repeat what the outer one
 * shows, and each mount costs bubblewrap time at every start.
 */
function outermost(paths: readonly string[]): string[] {
  const sorted = [...paths].sort();
  return sorted.filter((path) => !sorted.some((other) => other !== path && isWithin(other, path)));
}
