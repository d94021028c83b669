import { mkdir, readFile, symlink, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { applyPatch } from 'diff';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { editFileTool } from '../../src/tools/edit-file.js';
import { EDIT_CORPUS } from './corpus/edits.js';
import { createWorkspace, lockAgainstWriting, type Workspace } from './workspace.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
});
afterEach(async () => {
  await ws.remove();
});

interface EditArgs {
  old_string: string;
  new_string: string;
  replace_all?: boolean;
}

const edit = (file_path: string, args: EditArgs, maxWriteBytes?: number) =>
  editFileTool.execute(
    editFileTool.parameters.parse({ file_path, ...args }),
    ws.context(maxWriteBytes === undefined ? {} : { settings: { maxWriteBytes } }),
  );

const SOURCE = 'def greet(name):\n    return "hello " + name\n\n\ndef main():\n    print(greet("world"))\n';

describe('edit_file', () => {
  it('replaces a unique occurrence and shows the change as a diff', async () => {
    const path = await ws.write('app.py', SOURCE);
    const result = await edit(path, { old_string: '"hello "', new_string: '"hi "' });
    expect(result.success).toBe(true);
    expect(await readFile(path, 'utf8')).toBe(SOURCE.replace('"hello "', '"hi "'));
    expect(result.data).toBe(
      [
        `Edited ${path}: replaced 1 occurrence.`,
        '',
        `--- ${path}`,
        `+++ ${path}`,
        '@@ -1,5 +1,5 @@',
        ' def greet(name):',
        '-    return "hello " + name',
        '+    return "hi " + name',
        ' ',
        ' ',
        ' def main():',
      ].join('\n'),
    );
    expect(result.metadata).toMatchObject({ file_path: path, replacements: 1 });
  });

  it('refuses when old_string is not in the file', async () => {
    const path = await ws.write('app.py', SOURCE);
    const result = await edit(path, { old_string: 'goodbye', new_string: 'bye' });
    expect(result).toMatchObject({
      success: false,
      error: `old_string not found in ${path}. It must match the file exactly, including whitespace and indentation.`,
    });
  });

  it('refuses an ambiguous old_string and gives the number of occurrences', async () => {
    const path = await ws.write('app.py', SOURCE);
    const result = await edit(path, { old_string: 'greet', new_string: 'welcome' });
    expect(result.error).toBe(`old_string occurs 2 times in ${path}; include more surrounding text to make it unique, or set replace_all to true.`);
    expect(await readFile(path, 'utf8')).toBe(SOURCE);
  });

  it('replaces every occurrence with replace_all and counts them', async () => {
    const path = await ws.write('app.py', SOURCE);
    const result = await edit(path, { old_string: 'greet', new_string: 'welcome', replace_all: true });
    expect(result.data.split('\n')[0]).toBe(`Edited ${path}: replaced 2 occurrences.`);
    expect(await readFile(path, 'utf8')).toBe(SOURCE.replaceAll('greet', 'welcome'));
  });

  it('inserts new_string literally, $ signs included', async () => {
    const path = await ws.write('price.txt', 'price: X\n');
    await edit(path, { old_string: 'X', new_string: "$& $1 $$ $'" });
    expect(await readFile(path, 'utf8')).toBe("price: $& $1 $$ $'\n");
  });

  it('refuses an empty old_string and identical strings', async () => {
    const path = await ws.write('a.txt', 'abc\n');
    expect((await edit(path, { old_string: '', new_string: 'x' })).error).toBe('old_string must not be empty (use write_file to create a file)');
    expect((await edit(path, { old_string: 'abc', new_string: 'abc' })).error).toBe('old_string and new_string are identical: nothing to change');
  });

  it('resolves relative paths from the working directory', async () => {
    await ws.write('src/a.ts', 'let x = 1;\n');
    expect((await edit('src/a.ts', { old_string: 'let', new_string: 'const' })).success).toBe(true);
    expect(await readFile(ws.path('src/a.ts'), 'utf8')).toBe('const x = 1;\n');
  });

  it('edits CRLF files from text written with plain newlines, keeping CRLF', async () => {
    const path = await ws.write('win.txt', 'one\r\ntwo\r\nthree\r\n');
    const result = await edit(path, { old_string: 'one\ntwo', new_string: 'uno\ndos' });
    expect(result.success).toBe(true);
    expect(await readFile(path, 'utf8')).toBe('uno\r\ndos\r\nthree\r\n');
  });

  it('reports a missing file, a directory and a binary file', async () => {
    expect((await edit(ws.path('nope.py'), { old_string: 'a', new_string: 'b' })).error).toBe(`File not found: ${ws.path('nope.py')}`);
    await mkdir(ws.path('dir'));
    expect((await edit(ws.path('dir'), { old_string: 'a', new_string: 'b' })).error).toBe(`Path is a directory, not a file: ${ws.path('dir')}`);
    const binary = await ws.write('data.bin', Buffer.from([0x61, 0x00, 0x62]));
    expect((await edit(binary, { old_string: 'a', new_string: 'b' })).error).toBe(`Cannot edit binary file: ${binary}`);
  });

  it('refuses files that are not UTF-8 rather than corrupt them', async () => {
    const path = await ws.write('latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect((await edit(path, { old_string: 'caf', new_string: 'bar' })).error).toBe(`Cannot edit ${path}: it is not valid UTF-8 text`);
    expect(await readFile(path)).toEqual(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  });

  it('reports Permission denied when the file may not be written', async () => {
    const path = await ws.write('locked.py', 'x = 1\n');
    const unlock = lockAgainstWriting(path);
    try {
      expect(await edit(path, { old_string: '1', new_string: '2' })).toMatchObject({ success: false, error: `Permission denied: ${path}` });
    } finally {
      unlock();
    }
    expect(await readFile(path, 'utf8')).toBe('x = 1\n');
  });

  it('refuses a result over MAX_WRITE_BYTES', async () => {
    const path = await ws.write('a.txt', 'small\n');
    expect((await edit(path, { old_string: 'small', new_string: 'x'.repeat(50) }, 20)).error).toBe('File too large: 51 bytes (max 20)');
    expect(await readFile(path, 'utf8')).toBe('small\n');
  });

  it('refuses a sparse file of a gigabyte without reading it into the service', async () => {
    const path = await ws.write('sparse.txt', 'small\n');
    await truncate(path, 2 ** 30);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().arrayBuffers)), 1);
    const base = process.memoryUsage().arrayBuffers;
    const result = await edit(path, { old_string: 'small', new_string: 'big' }).finally(() => clearInterval(sampler));
    expect(peak - base, 'the service held the file in memory').toBeLessThan(64 * 2 ** 20);
    expect(result.error).toBe(`File too large: ${2 ** 30} bytes (max 10485760)`);
  });

  it.each(['.git/config', '.git/hooks/pre-commit'])('refuses to edit %s', async (relative) => {
    const path = await ws.write(relative, '[core]\n\tbare = false\n');
    const result = await edit(path, { old_string: 'false', new_string: 'true' });
    expect(result).toMatchObject({ success: false, error: `Refusing to write git hooks or configuration: ${path}` });
    expect(await readFile(path, 'utf8')).toBe('[core]\n\tbare = false\n');
  });

  describe('sandbox', () => {
    it('refuses an outside file by absolute path, by .. and through a symlink', async () => {
      const secret = join(ws.outside, 'secret.txt');
      await symlink(secret, ws.path('link'));
      for (const path of [secret, '../outside/secret.txt', ws.path('link'), `/proc/self/root${secret}`]) {
        expect((await edit(path, { old_string: 'top', new_string: 'no' })).error).toBe(`Path outside allowed paths: ${path}`);
      }
      expect(await readFile(secret, 'utf8')).toBe('top secret\n');
    });

    it('edits the target of a symlink that stays inside', async () => {
      const target = await ws.write('real.txt', 'alpha\n');
      await symlink(target, ws.path('alias.txt'));
      expect((await edit(ws.path('alias.txt'), { old_string: 'alpha', new_string: 'beta' })).success).toBe(true);
      expect(await readFile(target, 'utf8')).toBe('beta\n');
    });
  });

  it('shows a one-line change deep in a long file with its real line numbers', async () => {
    const lines = Array.from({ length: 200_000 }, (_, i) => `row ${i}`);
    const path = await ws.write('long.txt', `${lines.join('\n')}\n`);
    const result = await edit(path, { old_string: 'row 150000\n', new_string: 'row 150000 changed\nrow inserted\n' });
    expect(result.metadata.diff).toBe(
      [
        `--- ${path}`,
        `+++ ${path}`,
        '@@ -149998,7 +149998,8 @@',
        ' row 149997',
        ' row 149998',
        ' row 149999',
        '-row 150000',
        '+row 150000 changed',
        '+row inserted',
        ' row 150001',
        ' row 150002',
        ' row 150003',
      ].join('\n'),
    );
  });

  it('describes a change of thousands of dissimilar lines instead of diffing it', async () => {
    const before = Array.from({ length: 5_000 }, (_, i) => `old ${i}`).join('\n');
    const after = Array.from({ length: 5_000 }, (_, i) => `new ${i}`).join('\n');
    const path = await ws.write('all.txt', `head\n${before}\ntail\n`);
    const result = await edit(path, { old_string: before, new_string: after });
    expect(result.success).toBe(true);
    expect(result.metadata.diff).toBe('(the change is too large to show as a diff: 5000 lines from line 2 on became 5000 lines)');
    expect(await readFile(path, 'utf8')).toBe(`head\n${after}\ntail\n`);
  });

  it('marks a missing final newline when the change reaches the end of the file', async () => {
    const path = await ws.write('end.txt', 'a\nb\nc');
    const result = await edit(path, { old_string: 'c', new_string: 'c\nd' });
    expect(result.metadata.diff).toBe([`--- ${path}`, `+++ ${path}`, '@@ -1,3 +1,4 @@', ' a', ' b', '-c', '\\ No newline at end of file', '+c', '+d', '\\ No newline at end of file'].join('\n'));
  });

  it.each(EDIT_CORPUS.map((entry) => [entry.name, entry] as const))('previews the edit corpus case %s', async (_name, entry) => {
    const before = `head\n${entry.before()}\ntail\n`;
    const after = `head\n${entry.after()}\ntail\n`;
    const path = await ws.write('corpus.txt', before);
    const result = await edit(path, { old_string: entry.before(), new_string: entry.after() });
    expect(await readFile(path, 'utf8')).toBe(after);
    const diff = String(result.metadata.diff);
    if (entry.preview === 'described') {
      expect(diff).toMatch(/^\(the change is too large to show as a diff: \d+ lines? from line \d+ on became \d+ lines?\)$/);
    } else {
      expect(applyPatch(before, diff)).toBe(after);
    }
  });

  it('announces file_path and replace_all in tool_start', () => {
    const params = editFileTool.parameters.parse({ file_path: '/f', old_string: 'a', new_string: 'b' });
    expect(params.replace_all).toBe(false);
    expect(editFileTool.startArgs(params)).toEqual({ file_path: '/f', replace_all: false });
  });
});
