import { execFile, spawn } from 'node:child_process';
import { setuidFilter } from './setuid-filter.js';
import { ARGS_FD, argumentBytes, bwrapArguments, SECCOMP_FD, type SandboxSpec } from './bubblewrap.js';
import { safeSearchPath } from './exec/environment.js';
import { locateProgram } from './exec/program-path.js';
import { stageEtc } from './system-view.js';
import { readSandboxStatus } from './sandbox-status.js';
import { connectUserNetwork, stageResolvConf } from './user-network.js';
import { findPidsCgroup, inCgroup, limitedCommand, PidsCgroupPool, type ResourceLimits } from './resource-limits.js';

/** `/health`'s `sandbox` value and what the shell tools do. */
export type SandboxState = 'bubblewrap' | 'unavailable' | 'disabled';

export interface SandboxAvailability {
  state: SandboxState;
  /** Why, in words for the start-up log and the shell tools' refusal. */
  reason: string;
  bwrapPath?: string;
  prlimitPath?: string;
  /** Present when the service runs as root and pids cgroups can be made (RLIMIT_NPROC spares root). */
  cgroups?: PidsCgroupPool;
  shellPath?: string;
  /** The scrubbed copy of /etc the sandbox shows (see stageEtc). */
  etc?: string;
  /** slirp4netns, when it works here: `bash` then gets a network of its own (user-network.ts). */
  slirpPath?: string;
  /** The resolv.conf of that network. */
  resolvConf?: string;
  /** Why `bash` shares the host's network although SANDBOX_NETWORK asks for one (for the start-up log). */
  hostNetworkReason?: string;
}

/** A sandbox that works here: what a launcher needs. */
export type Usable = SandboxAvailability & { state: 'bubblewrap'; bwrapPath: string; prlimitPath: string; etc: string };

/** The refusal EXTENSIONS.md section 1 fixes, word for word. */
export const sandboxUnavailableMessage = (why: string): string => `Shell tools need the sandbox (bubblewrap), which is not available: ${why}`;

/** Programs the sandbox itself needs are looked up only in the system directories. */
const SYSTEM_PATH = '/usr/bin:/bin:/usr/sbin:/sbin';
const PROBE_TIMEOUT_MS = 5000;

/** How one process is started: the program and arguments to spawn instead of the command. */
export interface Launch {
  file: string;
  args: string[];
  /** bubblewrap reports on a pipe the spawner puts at STATUS_FD (readSandboxStatus); always with `userNetwork`. */
  status?: true;
  /** slirp4netns to uplink the sandbox's own network with (connectUserNetwork) before its command runs; bubblewrap then also waits on a pipe at BLOCK_FD. */
  userNetwork?: string;
  /**
   * Arguments only bytes can spell (binds of protected paths whose names are not UTF-8): the
   * spawner writes them to a pipe at ARGS_FD, which bubblewrap reads (`--args`) before anything runs.
   */
  argumentBytes?: Buffer;
  /**
   * The seccomp program of a writable sandbox (setuid-filter.ts): the spawner writes it to a pipe at
   * SECCOMP_FD, which bubblewrap loads before the command runs.
   */
  seccomp?: Buffer;
}

/**
 * Starts tool processes inside the sandbox: bubblewrap's view, prlimit's limits, and for a root
 * service a pids cgroup. One per tool call; dispose() after its processes are gone.
 */
export class SandboxLauncher {
  private readonly cgroup: string | undefined;

  constructor(
    private readonly availability: Usable,
    private readonly spec: Omit<SandboxSpec, 'cwd' | 'etc'>,
    private readonly limits: ResourceLimits,
  ) {
    this.cgroup = availability.shellPath === undefined ? undefined : availability.cgroups?.acquire(limits.maxProcesses);
  }

  /**
   * `status`: the spawner reads bubblewrap's status (readSandboxStatus) to tell a failed sandbox from
   * a failed command. `argumentBytes`: the spawner can feed Launch.argumentBytes (sandboxStdio); a
   * spawner that cannot gets no bind that only bytes can name (the snapshot still puts those back).
   */
  launch(executable: string, args: readonly string[], cwd: string, options: { status?: boolean; argumentBytes?: boolean } = {}): Launch {
    const inner = limitedCommand(this.availability.prlimitPath, this.limits, [executable, ...args]);
    const { etc } = this.availability;
    // The staged /etc itself is hidden, should an allowed path contain it: no command may plant
    // an ld.so.preload there for the next sandbox.
    const { slirpPath, resolvConf } = this.availability;
    const own = this.spec.network && slirpPath !== undefined && resolvConf !== undefined;
    const status = own || options.status === true;
    const bytes = options.argumentBytes === true ? argumentBytes(this.spec) : Buffer.alloc(0);
    // Only where the spawner feeds descriptors (bash, MCP servers): the writable sandboxes that run
    // what the agent or a server chose. No setuid file may be left in the allowed paths.
    const seccomp = options.argumentBytes === true && this.spec.writable ? setuidFilter() : undefined;
    const spec = {
      ...this.spec,
      etc,
      hiddenPaths: [...this.spec.hiddenPaths, etc],
      cwd,
      status,
      ...(own ? { userNetwork: { resolvConf } } : {}),
      ...(bytes.length > 0 ? { argumentsFd: ARGS_FD } : {}),
      ...(seccomp === undefined ? {} : { seccompFd: SECCOMP_FD }),
    };
    const sandboxed = [this.availability.bwrapPath, ...bwrapArguments(spec, inner)];
    const { shellPath } = this.availability;
    const command = this.cgroup === undefined || shellPath === undefined ? sandboxed : inCgroup(shellPath, this.cgroup, sandboxed);
    return {
      file: command[0] as string,
      args: command.slice(1),
      ...(status ? { status } : {}),
      ...(own ? { userNetwork: slirpPath } : {}),
      ...(bytes.length > 0 ? { argumentBytes: bytes } : {}),
      ...(seccomp === undefined ? {} : { seccomp }),
    };
  }

  /** After the processes are gone: the cgroup goes back to the pool. */
  dispose(): void {
    if (this.cgroup !== undefined) this.availability.cgroups?.release(this.cgroup);
  }
}

export const isAvailable = (availability: SandboxAvailability): availability is Usable =>
  availability.state === 'bubblewrap' && availability.bwrapPath !== undefined && availability.prlimitPath !== undefined && availability.etc !== undefined;

/** `true` in a sandbox with nothing allowed and the tools' kind of limits: what the start-up probes run. */
function probeLaunch(found: Usable, network: boolean): Launch & { launcher: SandboxLauncher } {
  const spec = { allowedPaths: [], writable: false, network, readOnlyPaths: [], hiddenPaths: [], toolchains: [], tmpBytes: 1024 * 1024 };
  const launcher = new SandboxLauncher(found, spec, { memoryMb: 256, maxProcesses: 16 });
  return { launcher, ...launcher.launch(locateProgram('true', SYSTEM_PATH) ?? '/bin/true', [], '/') };
}

/** Runs `true` in the same sandbox and limits the tools get: namespaces may be refused (containers). */
function probe(found: Usable): Promise<SandboxAvailability> {
  const { launcher, file, args } = probeLaunch(found, false);
  return new Promise((resolve) => {
    execFile(file, args, { timeout: PROBE_TIMEOUT_MS, env: {} }, (error, _stdout, stderr) => {
      launcher.dispose();
      if (error === null) resolve(found);
      else resolve({ state: 'unavailable', reason: `bubblewrap cannot create a sandbox here: ${stderr.trim() || error.message}` });
    });
  });
}

/**
 * Whether slirp4netns can uplink a sandbox here (it needs /dev/net/tun, which containers often
 * lack). If not, `bash` shares the host's network and says so (network-reach.ts), never silently.
 */
function probeUserNetwork(found: Usable): Promise<SandboxAvailability> {
  const slirpPath = locateProgram('slirp4netns', SYSTEM_PATH);
  if (slirpPath === undefined) return Promise.resolve({ ...found, hostNetworkReason: 'slirp4netns is not installed' });
  const withSlirp: Usable = { ...found, slirpPath, resolvConf: stageResolvConf() };
  const { launcher, file, args } = probeLaunch(withSlirp, true);
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'ignore', 'pipe', 'pipe'], env: {}, detached: true });
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    const up = connectUserNetwork(child, readSandboxStatus(child), slirpPath, () => {});
    child.once('error', () => {});
    child.once('close', (code) => {
      clearTimeout(timer);
      launcher.dispose();
      // Not awaited: the probe's own promise resolves from here. `up` never rejects (a failed
      // uplink resolves false), so nothing is lost.
      void up.then((ready) =>
        resolve(ready && code === 0 ? withSlirp : { ...found, hostNetworkReason: 'slirp4netns cannot uplink a sandbox here (is /dev/net/tun available?)' }),
      );
    });
  });
}

/**
 * Whether tool processes can run sandboxed, checked once per bwrap binary by each instance: the
 * service builds one at start-up (services.ts), so what it found decides every later call and a
 * second service in the same process (tests) probes for itself. `disabled` is the operator's
 * choice (SANDBOX_ENABLED=false); `unavailable` makes the shell tools refuse.
 */
export class SandboxProbes {
  private readonly probes = new Map<string, Promise<SandboxAvailability>>();

  detect(settings: { sandboxEnabled: boolean }, searchPath: string = safeSearchPath(process.env.PATH, [])): Promise<SandboxAvailability> {
    if (!settings.sandboxEnabled) return Promise.resolve({ state: 'disabled', reason: 'SANDBOX_ENABLED=false: tools run under the text policy only' });
    const bwrapPath = locateProgram('bwrap', searchPath);
    if (bwrapPath === undefined) return Promise.resolve({ state: 'unavailable', reason: 'bubblewrap (bwrap) is not installed' });
    const prlimitPath = locateProgram('prlimit', SYSTEM_PATH);
    if (prlimitPath === undefined) return Promise.resolve({ state: 'unavailable', reason: 'prlimit (util-linux) is not installed in /usr/bin or /bin' });
    let result = this.probes.get(bwrapPath);
    if (result === undefined) {
      result = probeSandbox(bwrapPath, prlimitPath);
      this.probes.set(bwrapPath, result);
    }
    return result;
  }
}

/** The sandbox as found now, with probes of its own (tests); the service asks its SandboxProbes. */
export const detectSandbox = (settings: { sandboxEnabled: boolean }, searchPath?: string): Promise<SandboxAvailability> =>
  new SandboxProbes().detect(settings, searchPath);

function probeSandbox(bwrapPath: string, prlimitPath: string): Promise<SandboxAvailability> {
  const root = process.getuid?.() === 0;
  const pidsCgroup = root ? findPidsCgroup() : undefined;
  const shellPath = locateProgram('sh', SYSTEM_PATH);
  const usable = async (): Promise<Usable> => ({
    state: 'bubblewrap' as const,
    reason: `bubblewrap at ${bwrapPath}`,
    bwrapPath,
    prlimitPath,
    etc: await stageEtc(),
    ...(pidsCgroup === undefined || shellPath === undefined ? {} : { cgroups: new PidsCgroupPool(pidsCgroup), shellPath }),
  });
  return usable()
    .then(probe, (error: unknown) => ({
      state: 'unavailable' as const,
      reason: `the sandbox's /etc could not be staged: ${error instanceof Error ? error.message : String(error)}`,
    }))
    .then((state) =>
      isAvailable(state)
        ? probeUserNetwork(state).catch((error: unknown) => ({ ...state, hostNetworkReason: `slirp4netns could not be tried: ${error instanceof Error ? error.message : String(error)}` }))
        : state,
    );
}
