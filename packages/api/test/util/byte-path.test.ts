import { lstatSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bytePath, fsPath, pathBytes, shownPath } from '../../src/util/byte-path.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mada-byte-path-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('byte paths', () => {
  it('reach a directory whose name is not UTF-8, which its text path does not', () => {
    const name = Buffer.concat([Buffer.from(`${dir}/odd`), Buffer.from([0xff])]);
    mkdirSync(name);
    const path = name.toString('latin1');
    expect(lstatSync(fsPath(path)).isDirectory()).toBe(true);
    expect(lstatSync(pathBytes(path)).isDirectory()).toBe(true);
    expect(lstatSync(name.toString('utf8'), { throwIfNoEntry: false })).toBeUndefined();
  });

  it('turn UTF-8 text into its bytes and back for people', () => {
    const path = bytePath(`${dir}/café`);
    expect(path).toHaveLength(dir.length + 6);
    expect(lstatSync(fsPath(path), { throwIfNoEntry: false })).toBeUndefined();
    mkdirSync(join(dir, 'café'));
    expect(lstatSync(fsPath(path)).isDirectory()).toBe(true);
    expect(shownPath(path)).toBe(`${dir}/café`);
  });

  it('show a name that is not UTF-8 byte by byte, and only that name', () => {
    expect(shownPath(`/a/café/odd\xff\\x/b`.replace('café', bytePath('café')))).toBe('/a/café/odd\\xff\\x5cx/b');
    expect(shownPath('/tmp/new\nline\xfe')).toBe('/tmp/new\\x0aline\\xfe');
  });
});
