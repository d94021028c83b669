import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import { RepositoryCensus } from '../../../src/tools/sandbox/repository-census.js';
import type { ToolContext, ToolResult } from '../../../src/tools/tool.js';
import { createToolHost, type ToolHost } from '../../../src/tools/tool-host.js';
import { writeFileTool } from '../../../src/tools/write-file.js';
import { createProject, toolContext, type Project } from './support/project.js';

/*
 * The census's cap on directories (repository-census.ts), made small: a tree over it fails closed.
 * A command cannot hide a hook past the cap by making the tree that big first, and `bash` is then
 * refused until the tree is back under it. Judged by the files, with real bubblewrap.
 */

const CAP = 40;

let project: Project;
let host: ToolHost;

beforeEach(() => {
  project = createProject();
  host = { ...createToolHost(), repositories: new RepositoryCensus({ maxDirectories: CAP }) };
});

afterEach(() => project.cleanup());

const context = (): ToolContext => toolContext(project, { host });
const bash = (command: string): Promise<ToolResult> => bashTool.execute(bashTool.parameters.parse({ command }), context());
const path = (relative: string): string => join(project.root, relative);

/** `count` directories, each inside the one before: a walk that stops at the cap never reaches the last. */
function chain(top: string, count: number): string {
  const dirs = Array.from({ length: count }, () => 'a');
  const bottom = path(join(top, ...dirs));
  mkdirSync(bottom, { recursive: true });
  return bottom;
}

describe('a tree with more directories than the cap', () => {
  it('refuses bash before it runs anything, and runs it again once there are fewer', async () => {
    chain('deps', CAP + 10);
    const refused = await bash('touch ran');
    expect(refused.success).toBe(false);
    expect(refused.metadata.refused).toBe(true);
    expect(refused.error).toContain(`more than ${CAP} directories under the allowed paths`);
    expect(existsSync(path('ran'))).toBe(false);

    rmSync(path('deps'), { recursive: true });
    expect((await bash('touch ran')).success).toBe(true);
    expect(existsSync(path('ran'))).toBe(true);
  });

  it('finds a hook planted past the cap by the command that made the tree that big, then refuses bash there', async () => {
    expect((await bash('ls')).success).toBe(true); // the census, under the cap
    const script = [
      'import os',
      `bottom = os.path.join('deps', *(['a'] * ${CAP + 20}))`,
      "os.makedirs(os.path.join(bottom, '.git', 'hooks'))",
      "open(os.path.join(bottom, '.git', 'HEAD'), 'w').write('ref: refs/heads/main\\\\n')",
      "open(os.path.join(bottom, '.git', 'config'), 'w').write('[core]\\\\n\\\\tfsmonitor = touch /tmp/planted\\\\n')",
      "hook = os.path.join(bottom, '.git', 'hooks', 'pre-commit')",
      "open(hook, 'w').write('#!/bin/sh\\\\ntouch /tmp/planted\\\\n')",
      'os.chmod(hook, 0o755)',
    ].join('\n');
    const result = await bash(`python3 -c "${script}"`);
    const gitDir = path(join('deps', ...Array.from({ length: CAP + 20 }, () => 'a'), '.git'));
    expect(existsSync(join(gitDir, 'hooks', 'pre-commit'))).toBe(false);
    expect(readFileSync(join(gitDir, 'config'), 'utf8')).not.toContain('fsmonitor');
    expect(result.success).toBe(false);
    expect(result.metadata.too_many_directories).toBe(true);
    expect(result.error).toContain(`[more than ${CAP} directories under the allowed paths now`);
    expect(result.metadata.removed_from_new_repositories).toEqual([join(gitDir, 'config') + ' (core.fsmonitor)', join(gitDir, 'hooks', 'pre-commit')]);

    const next = await bash('touch ran');
    expect(next.metadata.refused).toBe(true);
    expect(existsSync(path('ran'))).toBe(false);

    rmSync(path('deps'), { recursive: true });
    expect((await bash('touch ran')).success).toBe(true);
  });

  it('makes the file tools refuse a second name (hard link) of any file: which repositories there are is not known', async () => {
    chain('deps', CAP + 10);
    writeFileSync(path('first.txt'), 'one\n');
    linkSync(path('first.txt'), path('second.txt'));
    const result = await writeFileTool.execute(writeFileTool.parameters.parse({ file_path: 'second.txt', content: 'two\n' }), context());
    expect(result.success).toBe(false);
    expect(result.error).toContain('hard link');
    expect(readFileSync(path('first.txt'), 'utf8')).toBe('one\n');

    rmSync(path('deps'), { recursive: true });
    const written = await writeFileTool.execute(writeFileTool.parameters.parse({ file_path: 'second.txt', content: 'two\n' }), context());
    expect(written.success).toBe(true);
  });
});
