import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { judgeCall } from '../../../src/agents/approval-check.js';
import { bashTool } from '../../../src/tools/bash.js';
import { createProject, git, toolContext, type Project } from './support/project.js';

/**
 * A repository's config may be the attacker's (EXTENSIONS.md section 1): a remote that prunes with
 * a refspec into refs/heads made a plain `git fetch`, which no rule asks about, delete every branch.
 */
describe('bash: git fetch and pull never prune because the repository config says so', () => {
  let project: Project;
  beforeEach(() => {
    project = createProject();
    git(project.root, 'branch', 'feature');
    git(project.root, 'tag', 'v1');
    for (const [key, value] of [
      ['remote.origin.url', '.'],
      ['remote.origin.fetch', '+refs/nothing/*:refs/heads/*'],
      ['remote.origin.prune', 'true'],
      ['remote.origin.pruneTags', 'true'],
    ] as const) {
      git(project.root, 'config', key, value);
    }
  });
  afterEach(() => project.cleanup());

  const run = async (command: string) => {
    const context = toolContext(project);
    expect(judgeCall('bash', { command }, context).action).toBe('allow');
    return bashTool.execute(bashTool.parameters.parse({ command }), context);
  };

  it.each(['git fetch', 'git fetch origin', 'git pull origin'])('%s keeps the local branches and tags', async (command) => {
    await run(command);
    expect(git(project.root, 'branch', '--format=%(refname:short)').split('\n').filter(Boolean).sort()).toEqual(['feature', 'main']);
    expect(git(project.root, 'tag')).toBe('v1\n');
  });

  it('an explicit --prune still prunes, once the rules have asked', async () => {
    const context = toolContext(project);
    expect(judgeCall('bash', { command: 'git fetch --prune' }, context).action).toBe('ask');
    expect(judgeCall('bash', { command: 'git remote prune origin' }, context).action).toBe('ask');
    expect(judgeCall('bash', { command: 'git remote update' }, context).action).toBe('ask');
    await bashTool.execute(bashTool.parameters.parse({ command: 'git fetch --prune' }), context);
    expect(git(project.root, 'branch', '--format=%(refname:short)')).toBe('');
  });
});
