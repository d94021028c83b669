import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callReach } from '../../src/agents/approval-check.js';
import { isWithin } from '../../src/tools/sandbox/paths.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { createWorkspace, type Workspace } from '../tools/workspace.js';

/**
 * What an approve_always grant given in `a` may cover (EXTENSIONS.md section 3): a call whose every
 * path, as the command policy resolves it, lies inside `a`. Each hostile call reaches `b` (or the
 * policy cannot say where it reaches) and so must ask again; each benign one stays covered.
 */
let ws: Workspace;
let context: ToolContext;
let a: string;
let b: string;

beforeAll(async () => {
  ws = await createWorkspace();
  a = ws.path('a');
  b = ws.path('b');
  mkdirSync(join(a, 'sub'), { recursive: true });
  mkdirSync(b);
  for (const file of [join(a, 'x.txt'), join(a, 'sub', 'y.txt'), join(a, 'script.py'), join(b, 'x.txt')]) writeFileSync(file, 'x\n');
  symlinkSync('../b', join(a, 'link'));
  execFileSync('tar', ['-cf', join(a, 'arch.tar'), '-C', a, 'x.txt']);
  context = ws.context({ workingDir: a });
});
afterAll(() => ws.remove());

type Params = Record<string, unknown>;
const shell = (command: string, cwd?: string): Params => (cwd === undefined ? { command } : { command, cwd });
const covered = async (tool: string, params: Params): Promise<boolean> => {
  const reach = await callReach(tool, params, context);
  return reach !== undefined && reach.every((path) => isWithin(a, path));
};

const HOSTILE_COMMANDS: [string, string?][] = [
  ['rm ../b/x.txt'],
  ['rm link/x.txt'],
  ['rm link'],
  ['rm ../b/*.txt'],
  ['rm x.txt && rm ../b/x.txt'],
  ['rm x.txt; cat ../b/x.txt'],
  ['rm x.txt', '../b'],
  ['rm x.txt', 'link'],
  ['echo hi > ../b/f.txt'],
  ['echo hi >> link/f.txt'],
  ['cat < ../b/x.txt'],
  ['tar -xf arch.tar -C ../b'],
  ['tar -xf arch.tar -C link'],
  // A member `link/x` goes through the link `link` already in `a`.
  ['tar -xf arch.tar'],
  ['cp x.txt ../b/'],
  ['mv x.txt ../b/moved.txt'],
  ['touch ../b/new.txt'],
  ['mkdir ../b/new'],
  ['chmod 600 ../b/x.txt'],
  ['sed -i s/x/y/ ../b/x.txt'],
  ['find ../b -name x.txt'],
  ['ls ../b'],
  ["sed -n 'w ../b/f.txt' x.txt"],
  ['awk \'{ print > "../b/f.txt" }\' x.txt'],
  ['find . -fprint ../b/f.txt'],
  ['sort -o ../b/f.txt x.txt'],
  ['unzip -o arch.zip -d ../b'],
  ['git diff --no-index x.txt ../b/x.txt'],
  // A program that runs code counts as acting where it runs and on the paths it is given.
  ['python3 ../b/script.py'],
  ['make', '../b'],
];

const BENIGN_COMMANDS: [string, string?][] = [
  ['rm x.txt'],
  ['rm sub/y.txt'],
  ['rm sub/*.txt'],
  ['rm ./sub/../x.txt'],
  ['rm y.txt', 'sub'],
  ['echo hi > out.txt 2>/dev/null'],
  ['rm x.txt 2>&1 | cat'],
  ['tar -xf arch.tar -C sub'],
  ['cp x.txt sub/'],
  ['mv x.txt sub/moved.txt'],
  ['git status'],
  ['python3 script.py'],
  ['make'],
];

describe('the reach of a call for an approve_always grant given in its working directory', () => {
  it.each(HOSTILE_COMMANDS)('`%s` (cwd %s) is not covered', async (command, cwd) => {
    expect(await covered('bash', shell(command, cwd))).toBe(false);
  });

  it.each(BENIGN_COMMANDS)('`%s` (cwd %s) is covered', async (command, cwd) => {
    expect(await covered('bash', shell(command, cwd))).toBe(true);
  });

  it('judges an absolute path by where it leads', async () => {
    expect(await covered('bash', shell(`rm ${join(b, 'x.txt')}`))).toBe(false);
    expect(await covered('bash', shell(`rm ${join(a, 'link', 'x.txt')}`))).toBe(false);
    expect(await covered('bash', shell(`rm ${join(a, 'x.txt')}`))).toBe(true);
  });

  it('judges a file tool by its resolved path', async () => {
    for (const path of ['../b/w.txt', 'link/w.txt', join(b, 'w.txt'), 'sub/../../b/w.txt']) {
      expect(await covered('write_file', { file_path: path, content: 'x' })).toBe(false);
      expect(await covered('edit_file', { file_path: path, old_string: 'x', new_string: 'y' })).toBe(false);
    }
    expect(await covered('write_file', { file_path: 'sub/w.txt', content: 'x' })).toBe(true);
    expect(await covered('edit_file', { file_path: join(a, 'x.txt'), old_string: 'x', new_string: 'y' })).toBe(true);
  });

  it('leaves out what the policy refuses: a path outside the allowed ones is not covered either', async () => {
    expect(await covered('bash', shell(`rm ${join(ws.outside, 'secret.txt')}`))).toBe(false);
    expect(await covered('write_file', { file_path: join(ws.outside, 'w.txt'), content: 'x' })).toBe(false);
  });

  it('counts the whole repository git acts on, which may begin above the working directory', async () => {
    mkdirSync(ws.path('.git'));
    try {
      expect(await covered('bash', shell('git status'))).toBe(false);
      mkdirSync(join(a, '.git'));
      expect(await covered('bash', shell('git status'))).toBe(true);
    } finally {
      execFileSync('rm', ['-rf', ws.path('.git'), join(a, '.git')]);
    }
  });
});
