import { execFileSync } from 'node:child_process';
import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { READ_DEFAULT_LIMIT, READ_MAX_WINDOW_CHARS, readFileTool } from '../../src/tools/read-file.js';
import { createWorkspace, type Workspace } from './workspace.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.remove();
});

const read = (file_path: string, options: { offset?: number; limit?: number } = {}) =>
  readFileTool.execute(readFileTool.parameters.parse({ file_path, ...options }), ws.context());

const lines = (count: number, prefix = 'line'): string => Array.from({ length: count }, (_, i) => `${prefix} ${i + 1}\n`).join('');

describe('read_file', () => {
  it('numbers lines like cat -n: number right-aligned in 6 columns, a tab, the line', async () => {
    const file = await ws.write('a.py', 'import os\n\n    print(1)\n');
    const result = await read(file);
    expect(result.success).toBe(true);
    expect(result.data).toBe('     1\timport os\n     2\t\n     3\t    print(1)');
  });

  it('counts a last line that has no newline', async () => {
    const file = await ws.write('b.txt', 'first\nlast');
    expect((await read(file)).data).toBe('     1\tfirst\n     2\tlast');
  });

  it('starts at a zero-based offset and returns at most limit lines, saying how to continue', async () => {
    const file = await ws.write('long.txt', lines(10));
    const result = await read(file, { offset: 2, limit: 3 });
    expect(result.data).toBe(
      '     3\tline 3\n     4\tline 4\n     5\tline 5\n\n(Showing lines 3-5; the file continues. Call read_file with offset=5 to read more.)',
    );
    expect(result.metadata).toMatchObject({ lines_returned: 3, has_more: true });
  });

  it('adds no continuation note when the window reaches the end of the file', async () => {
    const file = await ws.write('ten.txt', lines(10));
    const result = await read(file, { offset: 7, limit: 3 });
    expect(result.data).toBe('     8\tline 8\n     9\tline 9\n    10\tline 10');
    expect(result.metadata).toMatchObject({ has_more: false, total_lines: 10 });
  });

  it('returns 2000 lines by default', async () => {
    const file = await ws.write('big.txt', lines(2500));
    const result = await read(file);
    const shown = result.data.split('\n').filter((line) => /^ *\d+\t/.test(line));
    expect(shown).toHaveLength(2000);
    expect(shown.at(-1)).toBe('  2000\tline 2000');
    expect(result.data).toContain('Call read_file with offset=2000 to read more.');
  });

  it('cuts lines over 2000 characters and says so', async () => {
    const file = await ws.write('wide.txt', `${'x'.repeat(2500)}\nshort\n`);
    const result = await read(file);
    const [first, second] = result.data.split('\n');
    expect(first).toBe(`     1\t${'x'.repeat(2000)} [... line cut at 2000 characters]`);
    expect(second).toBe('     2\tshort');
    expect(result.metadata).toMatchObject({ lines_cut: 1 });
  });

  it('keeps a line of exactly 2000 characters whole', async () => {
    const file = await ws.write('exact.txt', `${'y'.repeat(2000)}\r\n`);
    expect((await read(file)).data).toBe(`     1\t${'y'.repeat(2000)}`);
  });

  it('reads a gigantic single-line file without returning all of it', async () => {
    const file = await ws.write('minified.js', 'z'.repeat(20_000_000));
    const result = await read(file, { limit: 1 });
    expect(result.data.length).toBeLessThan(2100);
    expect(result.metadata).toMatchObject({ lines_returned: 1, total_lines: 1 });
  });

  it('shows CRLF files without the carriage returns', async () => {
    const file = await ws.write('win.txt', 'one\r\ntwo\r\n');
    expect((await read(file)).data).toBe('     1\tone\n     2\ttwo');
  });

  it('says so when the file is empty', async () => {
    const file = await ws.write('empty.txt', '');
    const result = await read(file);
    expect(result).toMatchObject({ success: true, data: `File is empty: ${file}` });
  });

  it('refuses an offset past the end and gives the number of lines', async () => {
    const file = await ws.write('short.txt', lines(3));
    const result = await read(file, { offset: 10 });
    expect(result).toMatchObject({ success: false, error: `Offset 10 is past the end of ${file}, which has 3 lines` });
  });

  it('refuses relative paths and suggests the absolute one', async () => {
    await ws.write('src/app.ts', 'x\n');
    const result = await read('src/app.ts');
    expect(result.success).toBe(false);
    expect(result.error).toBe(`file_path must be an absolute path, got: src/app.ts (did you mean ${ws.path('src/app.ts')}?)`);
  });

  it('reports a missing file', async () => {
    const missing = ws.path('nope.txt');
    expect(await read(missing)).toMatchObject({ success: false, error: `File not found: ${missing}` });
  });

  it('reports a directory', async () => {
    await mkdir(ws.path('dir'));
    expect((await read(ws.path('dir'))).error).toBe(`Path is a directory, not a file: ${ws.path('dir')} (use glob_files to list it)`);
  });

  it('refuses binary files', async () => {
    const file = await ws.write('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d]));
    expect(await read(file)).toMatchObject({ success: false, error: `Cannot read binary file: ${file}` });
  });

  it('refuses special files such as a FIFO instead of blocking on them', async () => {
    const fifo = ws.path('pipe');
    execFileSync('mkfifo', [fifo]);
    expect(await read(fifo)).toMatchObject({ success: false, error: `Not a regular file: ${fifo}` });
  });

  describe('sandbox', () => {
    const secret = (): string => join(ws.outside, 'secret.txt');

    it('refuses an absolute path outside the allowed paths', async () => {
      expect(await read(secret())).toMatchObject({ success: false, error: `Path outside allowed paths: ${secret()}` });
    });

    it('refuses escaping with ..', async () => {
      const sneaky = `${ws.root}/../outside/secret.txt`;
      expect(await read(sneaky)).toMatchObject({ success: false, error: `Path outside allowed paths: ${sneaky}` });
    });

    it('refuses a symlink inside that points outside', async () => {
      await symlink(secret(), ws.path('link.txt'));
      expect(await read(ws.path('link.txt'))).toMatchObject({ success: false, error: `Path outside allowed paths: ${ws.path('link.txt')}` });
    });

    it('refuses /proc/self/root/... aliases of outside files', async () => {
      const alias = `/proc/self/root${secret()}`;
      const result = await read(alias);
      expect(result.success).toBe(false);
      expect(result.error).toBe(`Path outside allowed paths: ${alias}`);
    });

    it('follows a symlink that stays inside', async () => {
      await ws.write('real.txt', 'inside\n');
      await symlink(ws.path('real.txt'), ws.path('alias.txt'));
      expect(await read(ws.path('alias.txt'))).toMatchObject({ success: true, data: '     1\tinside' });
    });
  });

  it('ends a window of a huge limit at READ_MAX_WINDOW_CHARS, and the next call goes on from there', async () => {
    const file = await ws.write('many.txt', lines(600_000, 'n'));
    const first = await read(file, { limit: 10_000_000 });
    const shown = Number(first.metadata.lines_returned);
    expect(shown).toBeGreaterThan(READ_DEFAULT_LIMIT);
    expect(shown).toBeLessThan(600_000);
    expect(first.data.length).toBeLessThan(READ_MAX_WINDOW_CHARS + 1_000);
    expect(first.data.endsWith(`(Showing lines 1-${shown}; the file continues, and at most ${READ_MAX_WINDOW_CHARS} characters are returned at once. Call read_file with offset=${shown} to read more.)`)).toBe(true);
    const next = await read(file, { offset: shown, limit: 1 });
    expect(next.data.split('\n')[0]).toBe(`${String(shown + 1).padStart(6)}\tn ${shown + 1}`);
  });

  it('returns the default window of 2000 cut lines whole', async () => {
    const file = await ws.write('wide.txt', lines(2_100, 'x'.repeat(3_000)));
    const result = await read(file);
    expect(result.metadata).toMatchObject({ lines_returned: READ_DEFAULT_LIMIT, lines_cut: READ_DEFAULT_LIMIT, has_more: true });
    expect(result.data.endsWith('(Showing lines 1-2000; the file continues. Call read_file with offset=2000 to read more.)')).toBe(true);
  });

  it('validates and defaults its parameters', () => {
    expect(readFileTool.parameters.parse({ file_path: '/x' })).toEqual({ file_path: '/x', offset: 0, limit: 2000 });
    expect(readFileTool.parameters.safeParse({ file_path: '/x', offset: -1 }).success).toBe(false);
    expect(readFileTool.parameters.safeParse({ file_path: '/x', limit: 0 }).success).toBe(false);
  });

  it('announces file_path, offset and limit in tool_start', () => {
    expect(readFileTool.startArgs({ file_path: '/x', offset: 5, limit: 10 })).toEqual({ file_path: '/x', offset: 5, limit: 10 });
    expect(readFileTool.readOnly).toBe(true);
  });
});
