import { existsSync, lstatSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import type { ToolResult } from '../../../src/tools/tool.js';
import { createToolHost, type ToolHost } from '../../../src/tools/tool-host.js';
import { createProject, git, toolContext, type Project } from './support/project.js';

/*
 * What the census's shortcuts rest on (repository-census.ts): a nested repository costs a stat of
 * its git directory, its `config` and its `hooks` directory, each listing kept while the
 * directory's stamp is unchanged. Making a file changes its directory; a write in place does not,
 * and is caught by the file's own stat. Each case runs on a warm cache (the listings kept), as
 * every command after the first does.
 */

let project: Project;
let host: ToolHost;

beforeEach(async () => {
  project = createProject();
  host = createToolHost();
  const lib = path('vendor/lib');
  mkdirSync(lib, { recursive: true });
  git(lib, 'init', '-q', '-b', 'main');
  writeFileSync(join(lib, '.git/hooks/pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  // Older than a clock tick, then two commands: the listings and files are in the cache.
  await sleep(120);
  expect((await bash('ls')).success).toBe(true);
  expect((await bash('ls')).success).toBe(true);
});

afterEach(() => project.cleanup());

const bash = (command: string): Promise<ToolResult> => bashTool.execute(bashTool.parameters.parse({ command }), toolContext(project, { host }));
const python = (code: string): Promise<ToolResult> => bash(`python3 -c "${code}"`);
const path = (relative: string): string => join(project.root, relative);

describe('a nested repository on a warm census', () => {
  it("puts back the user's own hook rewritten in place (its directory unchanged)", async () => {
    const hook = path('vendor/lib/.git/hooks/pre-commit');
    const result = await python("f = open('vendor/lib/.git/hooks/pre-commit', 'r+'); f.write('#!/bin/sh\\\\ntouch /tmp/planted\\\\n'); f.close()");
    expect(readFileSync(hook, 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(result.metadata.restored_protected_files).toEqual([hook]);
  });

  it('takes out a config.worktree and a commondir made beside the config', async () => {
    const result = await python(
      "open('vendor/lib/.git/config.worktree', 'w').write('[core]\\\\n\\\\tfsmonitor = touch /tmp/planted\\\\n')\nopen('vendor/lib/.git/commondir', 'w').write('../../other/.git\\\\n')",
    );
    expect(existsSync(path('vendor/lib/.git/config.worktree'))).toBe(false);
    expect(existsSync(path('vendor/lib/.git/commondir'))).toBe(false);
    expect(result.metadata.restored_protected_files).toEqual([path('vendor/lib/.git/commondir'), path('vendor/lib/.git/config.worktree')]);
  });

  it('puts back a hooks directory swapped for a link to planted hooks', async () => {
    const result = await python(
      "import os\nos.makedirs('planted')\nopen('planted/pre-commit', 'w').write('#!/bin/sh\\\\ntouch /tmp/planted\\\\n')\nos.chmod('planted/pre-commit', 0o755)\nos.rename('vendor/lib/.git/hooks', 'vendor/lib/old-hooks')\nos.symlink('../../../planted', 'vendor/lib/.git/hooks')",
    );
    expect(lstatSync(path('vendor/lib/.git/hooks')).isDirectory()).toBe(true);
    expect(readFileSync(path('vendor/lib/.git/hooks/pre-commit'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
    expect(result.success).toBe(false);
  });

  it('puts back the mode of a hooks directory made writable to all', async () => {
    const result = await python("import os\nos.chmod('vendor/lib/.git/hooks', 0o777)");
    expect(lstatSync(path('vendor/lib/.git/hooks')).mode & 0o777).toBe(0o755);
    expect(result.metadata.restored_protected_files).toEqual([path('vendor/lib/.git/hooks')]);
  });
});
