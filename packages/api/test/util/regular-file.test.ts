import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRegularFile, readRegularFileSync, readRegularFileWithStatsSync } from '../../src/util/regular-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mada-regular-file-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe.each([
  ['synchronously', async (path: string, max: number) => readRegularFileSync(path, max)],
  ['asynchronously', readRegularFile],
])('reading a file the working directory supplies, %s', (_, read) => {
  it('gives a regular file its bytes', async () => {
    writeFileSync(join(dir, 'rules'), 'build/\n*.log\n');
    expect((await read(join(dir, 'rules'), 1024))?.toString()).toBe('build/\n*.log\n');
  });

  it('passes over a FIFO at once instead of waiting for a writer that never comes', async () => {
    execFileSync('mkfifo', [join(dir, '.gitignore')]);
    expect(await read(join(dir, '.gitignore'), 1024)).toBeUndefined();
  });

  it('passes over a file over the limit, a directory, a device and a missing path', async () => {
    writeFileSync(join(dir, 'big'), 'x'.repeat(2049));
    mkdirSync(join(dir, 'sub'));
    expect(await read(join(dir, 'big'), 2048)).toBeUndefined();
    expect(await read(join(dir, 'sub'), 2048)).toBeUndefined();
    expect(await read('/dev/zero', 2048)).toBeUndefined();
    expect(await read(join(dir, 'missing'), 2048)).toBeUndefined();
  });
});

describe('reading the file itself, not a link put in its place', () => {
  it('refuses a symbolic link in the last place of the path, and gives the stats of what it read', () => {
    writeFileSync(join(dir, 'real'), 'real\n');
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    expect(readRegularFileWithStatsSync(join(dir, 'link'), 1024, true)).toBeUndefined();
    expect(readRegularFileWithStatsSync(join(dir, 'link'), 1024)?.bytes.toString()).toBe('real\n');
    const read = readRegularFileWithStatsSync(join(dir, 'real'), 1024, true);
    expect(read?.bytes.toString()).toBe('real\n');
    expect(read?.stats.ino).toBe(statSync(join(dir, 'real')).ino);
  });
});
