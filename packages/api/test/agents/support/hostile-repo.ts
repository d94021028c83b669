import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A git repository written by an attacker: its config names a program for every place git may
 * run one from a repository (diff drivers, textconv, clean filters, signature checks), its
 * attributes apply them to every file, and one commit carries a signature so that showing it
 * calls the signature program. The program leaves a canary wherever it can.
 */
export interface HostileRepo {
  root: string;
  /** Not an allowed path: nothing may ever appear here. */
  outside: string;
  /** Files the planted program creates when it runs with write access. */
  canaries: string[];
}

const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/', GIT_CONFIG_NOSYSTEM: '1' };

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' });
}

const FILES: Record<string, string> = {
  'README.md': '# Demo\nSome text\n',
  'notes.txt': 'alpha\nbeta\ngamma\n',
  'src/app.ts': 'export const answer = 42;\n// TODO: more\n',
  'secret/key.txt': 'operator says: nobody reads this\n',
  'asked.txt': 'reading this needs a yes\n',
};

/** A commit object with a `gpgsig` header: no key signed it, but git asks the program to verify it. */
function plantSignedCommit(root: string): void {
  const tree = git(root, 'rev-parse', 'HEAD^{tree}').trim();
  const parent = git(root, 'rev-parse', 'HEAD').trim();
  const body = [
    `tree ${tree}`,
    `parent ${parent}`,
    'author A <a@example.com> 1700000000 +0000',
    'committer A <a@example.com> 1700000000 +0000',
    'gpgsig -----BEGIN PGP SIGNATURE-----',
    ' ',
    ' iQEzBAABCAAdFiEE',
    ' -----END PGP SIGNATURE-----',
    '',
    'signed',
    '',
  ].join('\n');
  const id = execFileSync('git', ['hash-object', '-t', 'commit', '-w', '--stdin'], { cwd: root, env: gitEnv, input: body, encoding: 'utf8' }).trim();
  git(root, 'update-ref', 'refs/heads/signed', id);
}

/** `filters: false` leaves out the clean and smudge filter, which `git status` runs by design. */
export function createHostileRepo(root: string, outside: string, options: { filters?: boolean } = {}): HostileRepo {
  mkdirSync(outside, { recursive: true });
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(join(root, 'secret'), { recursive: true });
  for (const [name, content] of Object.entries(FILES)) writeFileSync(join(root, name), content);
  const canaries = [join(outside, 'canary'), join(root, 'canary'), join(root, '.git', 'canary')];
  const program = join(root, 'tools.sh');
  writeFileSync(program, `#!/bin/sh\n${canaries.map((c) => `touch '${c}' 2>/dev/null`).join('\n')}\ncat\n`);
  chmodSync(program, 0o755);
  git(root, 'init', '-q', '-b', 'main');
  git(root, 'config', 'user.name', 'Test User');
  git(root, 'config', 'user.email', 'test@example.com');
  git(root, 'add', '.');
  git(root, 'commit', '-q', '-m', 'initial commit');
  git(root, 'tag', 'v1');
  git(root, 'branch', 'feature');
  writeFileSync(join(root, 'notes.txt'), 'alpha\nbeta\ngamma\ndelta\n');
  git(root, 'stash', '-q');
  for (const [key, value] of [
    ['diff.x.command', program],
    ['diff.x.textconv', program],
    ['filter.x.clean', program],
    ['filter.x.smudge', program],
    ['gpg.program', program],
    ['gpg.ssh.program', program],
    ['core.fsmonitor', program],
    ['core.pager', program],
    ['pager.log', program],
    ['pager.show', program],
    ['core.gitProxy', program],
    ['core.askPass', program],
    // Settings under which a read would write the index, if git took its optional locks.
    ['core.untrackedCache', 'true'],
    ['core.splitIndex', 'true'],
    ['gc.auto', '1'],
    ['maintenance.auto', 'true'],
  ] as const) {
    git(root, 'config', key, value);
  }
  writeFileSync(join(root, '.gitattributes'), options.filters === false ? '* diff=x\n' : '* diff=x filter=x\n');
  plantSignedCommit(root);
  // An uncommitted change, so that the diff machinery has something to show.
  writeFileSync(join(root, 'README.md'), '# Demo\nSome text, changed\n');
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  symlinkSync(outside, join(root, 'outside-link'));
  return { root, outside, canaries };
}

/**
 * A partial clone (`--filter=blob:none`) whose blobs are all missing: showing a file makes git
 * fetch it from the promisor remote, with the upload-pack program the clone's config names.
 */
export function createPartialClone(root: string, outside: string): HostileRepo {
  const source = join(outside, 'source');
  mkdirSync(source, { recursive: true });
  writeFileSync(join(source, 'a.txt'), 'hello\n');
  git(source, 'init', '-q', '-b', 'main');
  git(source, 'add', '.');
  git(source, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'a');
  git(source, 'config', 'uploadpack.allowFilter', 'true');
  git(outside, 'clone', '-q', '--filter=blob:none', '--no-checkout', `file://${source}`, root);
  const canaries = [join(outside, 'canary'), join(root, 'canary')];
  const program = join(root, 'upload.sh');
  writeFileSync(program, `#!/bin/sh\n${canaries.map((c) => `touch '${c}' 2>/dev/null`).join('\n')}\nexec git-upload-pack "$@"\n`);
  chmodSync(program, 0o755);
  git(root, 'config', 'remote.origin.uploadpack', program);
  git(root, 'config', 'protocol.allow', 'always');
  git(root, 'config', 'protocol.file.allow', 'always');
  return { root, outside, canaries };
}

/**
 * Everything about a directory tree that a change would show: each entry's type, mode, size,
 * modification time and content (links: their target). A map, so that a failure names the entry.
 */
export function treeFingerprint(root: string, options: { contentOnly?: boolean } = {}): Record<string, string> {
  const out: Record<string, string> = {};
  // A revert writes what it restores anew: what it must give back is the content and the mode.
  const time = (mtimeMs: number): string => (options.contentOnly === true ? '' : ` ${mtimeMs}`);
  const visit = (path: string, name: string): void => {
    const stats = lstatSync(path);
    const at = name === '' ? '.' : name;
    if (stats.isSymbolicLink()) {
      out[at] = `link ${readlinkSync(path)}`;
    } else if (stats.isDirectory()) {
      out[at] = `dir ${stats.mode.toString(8)}${time(stats.mtimeMs)}`;
      for (const entry of readdirSync(path).sort()) visit(join(path, entry), name === '' ? entry : `${name}/${entry}`);
    } else {
      const digest = createHash('sha256').update(readFileSync(path)).digest('hex');
      out[at] = `file ${stats.mode.toString(8)} ${stats.size}${time(stats.mtimeMs)} ${digest}`;
    }
  };
  if (existsSync(root)) visit(root, '');
  return out;
}
