import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isWithin, PathOutsideError, PathSandbox } from '../../../src/tools/sandbox/paths.js';
import { tempDir } from '../../../../../test/helpers/temp-dirs.js';

let root: string;
let sandbox: PathSandbox;
beforeAll(() => {
  root = tempDir('mada-paths-');
  mkdirSync(join(root, 'src'));
  writeFileSync(join(root, 'src', 'a.ts'), '');
  symlinkSync('/etc/ssl', join(root, 'sslink'));
  symlinkSync(join(root, 'src'), join(root, 'inner'));
  symlinkSync('/nowhere/at/all', join(root, 'dangling'));
  sandbox = new PathSandbox([root]);
});

const refused = (path: string) => expect(() => sandbox.resolve(path, root)).toThrow(PathOutsideError);

describe('PathSandbox', () => {
  it('resolves paths inside, existing or not yet created', () => {
    expect(sandbox.resolve('src/a.ts', root)).toBe(join(root, 'src/a.ts'));
    expect(sandbox.resolve(join(root, 'src/new/file.ts'), root)).toBe(join(root, 'src/new/file.ts'));
    expect(sandbox.resolve('src/../src/./a.ts', root)).toBe(join(root, 'src/a.ts'));
  });

  it('follows symlinks that stay inside', () => {
    expect(sandbox.resolve('inner/a.ts', root)).toBe(join(root, 'src/a.ts'));
  });

  it('applies .. after a symlink from the link target, as the kernel does', () => {
    // sslink -> /etc/ssl, so sslink/../passwd is /etc/passwd, not <root>/passwd.
    refused('sslink/../passwd');
    refused(`${root}/sslink/../passwd`);
  });

  it.each(['../outside', '/etc/passwd', 'sslink/certs', '/proc/self/root/etc/passwd', 'dangling', 'dangling/x', 'nothere/../../etc/passwd'])(
    'refuses %s',
    (path) => refused(path),
  );

  it('names the path in the refusal', () => {
    expect(() => sandbox.resolve('/etc/passwd', root)).toThrow('Path outside allowed paths: /etc/passwd');
  });
});

describe('isWithin', () => {
  /** The definition by path resolution, which isWithin's text comparison must agree with. */
  const byResolution = (root: string, candidate: string): boolean => {
    if (candidate === root) return true;
    const rel = relative(root, candidate);
    return rel !== '' && rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel);
  };

  it.each([
    ['/srv/p', '/srv/p/a.ts', true],
    ['/srv/p', '/srv/p', true],
    ['/srv/p', '/srv/pp/a.ts', false],
    ['/srv/p', '/srv', false],
    ['/srv/p', '/srv/p/..b', true],
    ['/srv/p', '/srv/p/../q', false],
    ['/srv/p', '/srv/p/./a', true],
    ['/srv/p', '/srv//p/a', true],
    ['/srv/p', '/srv/p/', false],
    ['/srv/p/', '/srv/p/a', true],
    ['/srv/p/..', '/srv/q', true],
    ['/srv/p/.', '/srv/p/a', true],
    ['/', '/etc/passwd', true],
    ['/', '/', true],
    ['/srv/p', '/srv/p/a/..', false],
    ['/srv/p', '/srv/p/a/../../p/b', true],
  ])('%s holds %s: %s, as resolving both paths says', (root, candidate, expected) => {
    expect(isWithin(root, candidate)).toBe(expected);
    expect(byResolution(root, candidate)).toBe(expected);
  });
});
