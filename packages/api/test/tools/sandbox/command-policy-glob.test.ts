import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expandGlob } from '../../../src/tools/sandbox/command-policy/glob.js';
import { checkCommand, type ShellWord } from '../../../src/tools/sandbox/command-policy/index.js';
import { createProject, type Project } from './support/project.js';

/** Pathname expansion runs on the event loop: it must end quickly whatever the glob and the tree. */

let project: Project;
const longName = 'a'.repeat(250);

beforeAll(() => {
  project = createProject();
  mkdirSync(join(project.root, 'trap'));
  for (let i = 0; i < 20; i++) writeFileSync(join(project.root, 'trap', `${longName.slice(i)}`), '');
  mkdirSync(join(project.root, 'wide'));
  for (let i = 0; i < 50; i++) writeFileSync(join(project.root, 'wide', `f${i}`), '');
});
afterAll(() => project.cleanup());

const check = (command: string) =>
  checkCommand({ tool: 'bash', command, cwd: project.root, baseDir: project.root, sandbox: project.sandbox, home: '/home/agent', locate: () => '/bin/true' });

const star = { kind: 'star' } as const;
const word = (source: string, glob: ShellWord['glob']): ShellWord => ({ source, value: source, ...(glob === undefined ? {} : { glob }) });

describe('glob expansion in the command policy', () => {
  it('answers at once for a glob that makes a backtracking regex run for ages', async () => {
    const { invocations } = await check('ls trap/*a*a*a*a*a*a*a*a*a*a*a*b');
    expect(invocations[0]?.argv).toEqual(['ls', 'trap/*a*a*a*a*a*a*a*a*a*a*a*b']);
    const all = await check('ls trap/*a*a*a*a*a*a*a*a*a*a*a*a');
    expect(all.invocations[0]?.argv).toHaveLength(21);
  });

  it('keeps bash classes and ? as they were', async () => {
    const { invocations } = await check('ls wide/f[1-2]? wide/f[!0-9]');
    expect(invocations[0]?.argv).toEqual(['ls', ...[10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29].map((n) => `wide/f${n}`).sort(), 'wide/f[!0-9]']);
  });

  it('refuses a glob with more wildcards than anyone writes by hand', async () => {
    await expect(check(`ls trap/${'*a'.repeat(65)}`)).rejects.toThrow('has more than 64 wildcards');
  });

  it('refuses a glob that would read more directory entries than its budget', () => {
    const glob = word('wide/*', [{ kind: 'literal', text: 'wide/' }, star]);
    expect(expandGlob(glob, project.root, project.sandbox, 1000)).toHaveLength(50);
    expect(() => expandGlob(glob, project.root, project.sandbox, 49)).toThrow('the glob wide/* reads more than 49 directory entries');
  });
});
