import type { ShellToolName } from './plan.js';

/** bash_readonly: exactly these programs (the original service's list). */
export const READONLY_PROGRAMS: readonly string[] = [
  'ls', 'find', 'cat', 'head', 'tail', 'wc', 'file', 'stat', 'tree', 'du', 'git', 'grep', 'awk', 'sed', 'sort', 'uniq',
  'pwd', 'whoami', 'hostname', 'which',
];

/** bash: exactly these programs (the original service's list). */
export const BASH_PROGRAMS: readonly string[] = [
  'ls', 'find', 'cat', 'head', 'tail', 'wc', 'file', 'stat', 'tree', 'du', 'df', 'grep', 'awk', 'sed', 'sort', 'uniq',
  'cut', 'tr', 'git', 'pwd', 'whoami', 'hostname', 'uname', 'date', 'env', 'printenv', 'which', 'type', 'echo', 'tar',
  'unzip', 'zipinfo', 'mkdir', 'touch', 'cp', 'mv', 'rm', 'chmod', 'python', 'python3', 'pip', 'pip3', 'pytest', 'mypy',
  'ruff', 'make', 'cargo', 'npm', 'node', 'tsc',
];

export const programsFor = (tool: ShellToolName): readonly string[] => (tool === 'bash_readonly' ? READONLY_PROGRAMS : BASH_PROGRAMS);

/** Refused whatever the arguments. */
export const ALWAYS_REFUSED: Record<string, string> = {
  sudo: 'runs commands as another user',
  su: 'runs commands as another user',
  doas: 'runs commands as another user',
  chown: 'changes file owners',
  chgrp: 'changes file groups',
  dd: 'writes raw devices and files',
  mkfs: 'formats file systems',
  fdisk: 'edits partition tables',
  parted: 'edits partition tables',
  shutdown: 'stops the machine',
  reboot: 'restarts the machine',
  poweroff: 'stops the machine',
  halt: 'stops the machine',
  init: 'changes the machine state',
  systemctl: 'controls system services',
};

/** Network programs, refused: the sandbox's network setting is the only way out. */
export const NETWORK_PROGRAMS: readonly string[] = [
  'curl', 'wget', 'ssh', 'scp', 'rsync', 'sftp', 'ftp', 'nc', 'netcat', 'ncat', 'telnet', 'nmap', 'ping', 'socat',
];

/** Programs whose job is to run another program: the policy could not see what that would be. */
export const WRAPPERS: readonly string[] = [
  'xargs', 'nice', 'nohup', 'timeout', 'exec', 'command', 'builtin', 'eval', 'source', '.', 'sh', 'bash', 'dash', 'zsh',
  'ksh', 'fish', 'csh', 'tcsh', 'busybox', 'env', 'stdbuf', 'setsid', 'chroot', 'unshare', 'nsenter', 'strace', 'ltrace',
  'watch', 'script', 'flock', 'time', 'parallel', 'ionice', 'chrt', 'taskset', 'runuser', 'pkexec', 'npx', 'bwrap',
];
