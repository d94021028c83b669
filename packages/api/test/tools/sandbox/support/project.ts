import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PathSandbox } from '../../../../src/tools/sandbox/paths.js';
import type { ToolContext, ToolSettings } from '../../../../src/tools/tool.js';
import { createToolHost } from '../../../../src/tools/tool-host.js';

/** A temp directory holding `project/` (the allowed path: a git repository) and `outside/` (not allowed). */
export interface Project {
  base: string;
  root: string;
  outside: string;
  sandbox: PathSandbox;
  cleanup(): void;
}

const FILES: Record<string, string> = {
  'README.md': '# Demo\nSome text\n',
  'notes.txt': 'alpha\nbeta\ngamma\nbeta\n',
  'main.py': "print('hello from main')\n",
  'data.csv': 'name,age\nann,30\nbob,25\n',
  Makefile: 'hello:\n\t@echo made\n',
  'src/app.ts': 'export const answer = 42;\n// TODO: more\n',
  'src/util.ts': 'export function add(a: number, b: number) {\n  return a + b;\n}\n',
};

const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', GIT_CONFIG_NOSYSTEM: '1' };


export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });
}

/** A repository with one commit at `dir` (made), nested in the project: `vendor/lib` in the census tests. */
export function nestedRepository(dir: string): void {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Nested');
  git(dir, 'config', 'user.email', 'nested@example.com');
  writeFileSync(join(dir, 'lib.txt'), 'lib\n');
  git(dir, 'add', 'lib.txt');
  git(dir, 'commit', '-qm', 'lib');
}

export function createProject(): Project {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'mada-shell-')));
  const root = join(base, 'project');
  const outside = join(base, 'outside');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'top secret\n');
  for (const [name, content] of Object.entries(FILES)) writeFileSync(join(root, name), content);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.name', 'Test User');
  git(root, 'config', 'user.email', 'test@example.com');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'initial commit');
  execFileSync('tar', ['-cf', 'archive.tar', 'src'], { cwd: root });
  execFileSync('python3', ['-c', "import zipfile\nwith zipfile.ZipFile('bundle.zip', 'w') as z: z.write('notes.txt')"], { cwd: root, env: gitEnv });
  symlinkSync('/etc', join(root, 'escape'));
  symlinkSync('/etc/hostname', join(root, 'hostname-link'));
  symlinkSync('../outside', join(root, 'outside-link'));
  return { base, root, outside, sandbox: new PathSandbox([root]), cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

export const testSettings = (overrides: Partial<ToolSettings> = {}): ToolSettings => ({
  toolTimeoutSeconds: 120,
  sandboxEnabled: true,
  sandboxNetwork: false,
  sandboxMemoryMb: 2048,
  sandboxMaxProcesses: 256,
  sandboxMaxFileMb: 1024,
  // A floor the host's disk keeps whatever else runs on it; disk-floor tests set their own.
  sandboxMinFreeMb: 1,
  sandboxMinFreePercent: 0,
  sandboxMinFreeInodes: 0,
  dataDir: tmpdir(),
  sandboxReadPaths: [],
  allowedPaths: [],
  workspacesDir: '',
  maxWriteBytes: 10_485_760,
  searchEngineUrl: 'http://localhost:8080',
  searchEngineTimeout: 10,
  retryMaxAttempts: 3,
  retryBaseDelay: 1,
  retryMaxDelay: 30,
  ...overrides,
});

/** One per test file, as one per service: the sandbox is probed once, not on every call. */
export const testToolHost = createToolHost();

export function toolContext(project: Project, overrides: Partial<ToolContext> = {}): ToolContext {
  return {
    workingDir: project.root,
    sandbox: project.sandbox,
    settings: testSettings(),
    host: testToolHost,
    signal: new AbortController().signal,
    ...overrides,
  };
}
