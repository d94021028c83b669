import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { judgeCall } from '../../../src/agents/approval-check.js';
import { bashTool } from '../../../src/tools/bash.js';
import { createProject, git, toolContext, type Project } from './support/project.js';

/**
 * The stash, refs and reflogs are files in `.git`: an archive holding an empty
 * `.git/logs/refs/stash` cleared the stash when extracted, without the approval `git stash clear` needs.
 */
describe('bash: extracted archives leave .git alone', () => {
  let project: Project;
  beforeEach(() => {
    project = createProject();
    const stage = join(project.base, 'stage');
    mkdirSync(join(stage, '.git/logs/refs'), { recursive: true });
    writeFileSync(join(stage, '.git/logs/refs/stash'), '');
    writeFileSync(join(stage, 'kept.txt'), 'kept\n');
    execFileSync('tar', ['-cf', join(project.root, 'evil.tar'), '.git', 'kept.txt'], { cwd: stage });
    execFileSync('python3', ['-c', "import zipfile\nwith zipfile.ZipFile('../project/evil.zip', 'w') as z:\n  z.write('.git/logs/refs/stash')\n  z.write('kept.txt')"], { cwd: stage });
    writeFileSync(join(project.root, 'notes.txt'), 'work in progress\n');
    git(project.root, 'stash', '-q');
  });
  afterEach(() => project.cleanup());

  it.each(['tar -xf evil.tar', 'unzip -o evil.zip', 'mkdir sub && tar -xf evil.tar -C sub', 'unzip -o evil.zip -d sub'])('%s', async (command) => {
    const context = toolContext(project);
    expect(judgeCall('bash', { command }, context).action).toBe('allow');
    const result = await bashTool.execute(bashTool.parameters.parse({ command }), context);
    expect(result.metadata.exit_code).toBe(0);
    expect(git(project.root, 'stash', 'list')).toMatch(/^stash@\{0\}/);
    expect(execFileSync('sh', ['-c', 'cat kept.txt || cat sub/kept.txt'], { cwd: project.root, encoding: 'utf8' })).toBe('kept\n');
  });
});
