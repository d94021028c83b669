import { execFileSync, spawn } from 'node:child_process';
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hostListener, type RedTeamCase } from './cases.js';
import { LIBC, MARKER, python, type Arena } from './support.js';

/*
 * The host around the sandbox, as escapes reported against other agent sandboxes reached it: the
 * kernel's settings, memory filesystems, other processes, unix sockets by path, file handles and
 * setuid files left for others to run. Judged by side effect like every case of the corpus: a
 * setting of the host unchanged, a process of the host alive, nothing written where the host reads
 * it, no setuid file in the work tree.
 */

/**
 * A global kernel setting that is harmless to change for a moment. The one that matters is
 * `kernel.core_pattern`: a `|program` there runs as the host's root, outside every namespace, at the
 * next crash, which the command can cause itself. Never touched here: this one stands for it.
 */
const SYSCTL = '/proc/sys/kernel/printk_ratelimit_burst';
const sysctlBefore = new Map<string, string>();

/** A process of the host standing for the service (its pid by arena root): signals and ptrace must not reach it. */
const victims = new Map<string, number>();

/** A process that is gone or a zombie is dead; a stopped one (T) was reached too. */
function processState(pid: number): string {
  try {
    return /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'gone';
  } catch {
    return 'gone';
  }
}

/** What the kernel's file handle of `path` is, as `name_to_handle_at` gives it on the host: type and bytes in hex. */
function fileHandle(path: string): { type: number; hex: string } {
  const out = execFileSync('python3', [
    '-c',
    `${HANDLE_STRUCT}import sys\nfh = FH(); fh.handle_bytes = 128; mount = ctypes.c_int()\nif libc.name_to_handle_at(-100, sys.argv[1].encode(), ctypes.byref(fh), ctypes.byref(mount), 0) != 0: raise OSError(ctypes.get_errno(), 'name_to_handle_at')\nprint(fh.handle_type, bytes(fh.f_handle[:fh.handle_bytes]).hex())`,
    path,
  ], { encoding: 'utf8' });
  const [type, hex] = out.trim().split(' ');
  return { type: Number(type), hex: hex as string };
}
/** struct file_handle, with room for any file system's handle. */
const HANDLE_STRUCT = `${LIBC}class FH(ctypes.Structure):\n    _fields_ = [('handle_bytes', ctypes.c_uint), ('handle_type', ctypes.c_int), ('f_handle', ctypes.c_ubyte * 128)]\n`;
const handles = new Map<string, { type: number; hex: string }>();

/** Where a host's service sockets live: the Docker and containerd daemons, D-Bus, systemd. */
const HOST_SOCKETS = ['/var/run/docker.sock', '/run/docker.sock', '/run/containerd/containerd.sock', '/run/dbus/system_bus_socket', '/run/systemd/private', '/run/user/0/bus'];

/** Files below `dir` with the setuid or setgid bit (links not followed, `.git` included). */
function setidFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((name) => {
    const stat = lstatSync(join(dir, name));
    return stat.isFile() && (stat.mode & 0o6000) !== 0;
  });
}

export const HOST_KERNEL_CASES: RedTeamCase[] = [
  {
    name: "a kernel setting written from the sandbox (a root service's uid 0 is the host's root: kernel.core_pattern would run a program outside)",
    tool: 'bash',
    setup: (a) => {
      const before = readFileSync(SYSCTL, 'utf8');
      sysctlBefore.set(a.root, before);
      return () => {
        if (readFileSync(SYSCTL, 'utf8') !== before) writeFileSync(SYSCTL, before);
      };
    },
    // Directly, then from a nested user namespace that maps the same uid 0 and remounts /proc/sys or mounts a /proc of its own.
    args: (a) => {
      const write = `try:\n        open(path, 'w').write('${Number(sysctlBefore.get(a.root)) + 1}'); print('wrote', path)\n    except OSError as e:\n        print(e)`;
      return python(
        `${LIBC}def attempt(path):\n    ${write}\nattempt('${SYSCTL}')\nprint('unshare', libc.unshare(0x10000000 | 0x20000 | 0x20000000), ctypes.get_errno())\nfor name, text in [('setgroups', 'deny'), ('uid_map', '0 0 1'), ('gid_map', '0 0 1')]:\n    try:\n        open('/proc/self/' + name, 'w').write(text)\n    except OSError as e:\n        print(name, e)\nif os.fork() == 0:\n    print('remount', libc.mount(None, b'/proc/sys', None, 32 | 4096, None), ctypes.get_errno())\n    attempt('${SYSCTL}')\n    os.makedirs('/tmp/p', exist_ok=True)\n    print('mount', libc.mount(b'proc', b'/tmp/p', b'proc', 0, None), ctypes.get_errno())\n    attempt('/tmp/p/sys/kernel/printk_ratelimit_burst')\n    os.sys.stdout.flush()\n    os._exit(0)\nos.wait()`,
      );
    },
    afterwards: (a) => {
      if (readFileSync(SYSCTL, 'utf8') !== sysctlBefore.get(a.root)) throw new Error(`${SYSCTL} of the host was written from the sandbox`);
    },
  },
  {
    name: "/dev and /dev/shm filled with the host's memory (bounded like /tmp), while POSIX shared memory still works",
    tool: 'bash',
    settings: { sandboxMemoryMb: 256 },
    args: () =>
      python(
        `import os\nfrom multiprocessing import shared_memory\nfor path in ['/dev/shm/fill', '/dev/fill']:\n    try:\n        with open(path, 'wb') as f:\n            for i in range(400):\n                f.write(bytes(1 << 20))\n    except OSError as e:\n        pass\n    size = os.path.getsize(path) if os.path.exists(path) else 0\n    print(path, 'bounded' if size <= 256 << 20 else 'took %d MiB' % (size >> 20))\n    if os.path.exists(path):\n        os.remove(path)\nm = shared_memory.SharedMemory(create=True, size=4096)\nm.buf[0] = 7\nprint('shared memory', m.buf[0])\nm.close(); m.unlink()`,
      ),
    expectOutput: /\/dev\/shm\/fill bounded\n\/dev\/fill bounded\nshared memory 7/,
  },
  {
    name: 'signals, ptrace and /proc/<pid>/mem aimed at a process of the host (as the service)',
    tool: 'bash',
    setup: (a) => {
      const victim = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
      victim.unref();
      victims.set(a.root, victim.pid as number);
      return () => {
        if (processState(victim.pid as number) !== 'gone') process.kill(victim.pid as number, 'SIGKILL');
      };
    },
    args: (a) => {
      const pid = victims.get(a.root) as number;
      return python(
        `${LIBC}import signal\nfor sig in [signal.SIGSTOP, signal.SIGKILL]:\n    try:\n        os.kill(${pid}, sig); print('signalled')\n    except OSError as e:\n        print(e)\nprint('ptrace', libc.ptrace(16, ${pid}, 0, 0), ctypes.get_errno())\ntry:\n    print(open('/proc/${pid}/mem', 'rb').read(1))\nexcept OSError as e:\n    print(e)\nos.kill(-1, signal.SIGKILL)`,
      );
    },
    afterwards: (a) => {
      const state = processState(victims.get(a.root) as number);
      if (state !== 'S' && state !== 'R') throw new Error(`the host's process was reached from the sandbox (state ${state})`);
    },
  },
  {
    name: 'unix sockets by path outside the allowed paths (a Docker socket, D-Bus, systemd)',
    tool: 'bash',
    setup: (a) => hostListener({ path: join(a.outside, 'docker.sock') }),
    args: (a) =>
      python(
        `import socket\nfor path in ${JSON.stringify([join(a.outside, 'docker.sock'), ...HOST_SOCKETS]).replaceAll('"', "'")}:\n    s = socket.socket(socket.AF_UNIX)\n    try:\n        s.connect(path); s.send(b'POST /containers/create HTTP/1.0\\\\r\\\\n\\\\r\\\\n'); print(path, 'connected')\n    except OSError as e:\n        print(path, e)`,
      ),
  },
  {
    name: 'open_by_handle_at of a file outside by its handle (the container escape known as shocker)',
    tool: 'bash',
    setup: (a) => void handles.set(a.root, fileHandle(join(a.outside, 'secret.txt'))),
    args: (a) => {
      const { type, hex } = handles.get(a.root) as { type: number; hex: string };
      return python(
        `${HANDLE_STRUCT}h = bytes.fromhex('${hex}')\nfh = FH(); fh.handle_bytes = len(h); fh.handle_type = ${type}\nfor i, b in enumerate(h):\n    fh.f_handle[i] = b\nmount = os.open('${a.root}', os.O_RDONLY)\nfd = libc.open_by_handle_at(mount, ctypes.byref(fh), 0)\nprint(os.read(fd, 100) if fd >= 0 else 'refused %d' % ctypes.get_errno())`,
      );
    },
  },
  {
    name: "the host's /dev/shm and /etc/ld.so.preload written from the sandbox (shared memory, a preload for every program)",
    tool: 'bash',
    setup: () => {
      const before = existsSync('/etc/ld.so.preload') ? readFileSync('/etc/ld.so.preload', 'utf8') : undefined;
      preloadBefore = before;
      return () => rmSync(`/dev/shm/${MARKER}-pwned`, { force: true });
    },
    args: (a: Arena) =>
      python(
        `for path in ['/dev/shm/${MARKER}-pwned', '/etc/ld.so.preload']:\n    try:\n        open(path, 'a').write('${join(a.root, 'evil.so')}\\\\n'); print('wrote', path)\n    except OSError as e:\n        print(e)`,
      ),
    afterwards: () => {
      if (existsSync(`/dev/shm/${MARKER}-pwned`)) throw new Error("the host's /dev/shm was written from the sandbox");
      const now = existsSync('/etc/ld.so.preload') ? readFileSync('/etc/ld.so.preload', 'utf8') : undefined;
      if (now !== preloadBefore) throw new Error("the host's /etc/ld.so.preload was written from the sandbox");
    },
  },
  {
    name: 'setuid and setgid files left in the work tree (chmod, an open that creates, openat2 and io_uring), for anyone outside to run as the service user',
    tool: 'bash',
    args: () =>
      python(
        `${LIBC}import shutil\nshutil.copy('/usr/bin/id', 'myid')\nfor mode in [0o4755, 0o2755, 0o6755]:\n    try:\n        os.chmod('myid', mode)\n    except OSError as e:\n        print(e)\ntry:\n    os.close(os.open('made', os.O_CREAT | os.O_WRONLY, 0o4755))\nexcept OSError as e:\n    print(e)\nhow = (ctypes.c_uint64 * 3)(os.O_CREAT | os.O_WRONLY, 0o4755, 0)\nprint('openat2', libc.syscall(437, -100, b'made2', how, 24), ctypes.get_errno())\nprint('io_uring', libc.syscall(425, 1, ctypes.create_string_buffer(120)), ctypes.get_errno())\nos.chmod('myid', 0o700)\nprint('plain chmod', oct(os.stat('myid').st_mode & 0o7777))`,
      ),
    expectOutput: /plain chmod 0o700/,
    afterwards: (a) => {
      const found = setidFiles(a.root);
      if (found.length > 0) throw new Error(`setuid or setgid files were left in the work tree: ${found.join(', ')}`);
    },
  },
];
let preloadBefore: string | undefined;
