import { describe, expect, it } from 'vitest';
import { configValues } from '../../../src/tools/sandbox/git-config-values.js';

describe('values of a git config the gitlink guard reads', () => {
  it('finds every value of a name in any section, case-insensitively, quotes removed', () => {
    const text = '[submodule "a"]\n\tpath = vendor/a\n[submodule "b"]\n  PATH=" vendor/b "\n\turl = x\n[extensions]\n\tobjectFormat = sha256\n';
    expect(configValues(text, 'path')).toEqual(['vendor/a', ' vendor/b ']);
    expect(configValues(text, 'objectformat')).toEqual(['sha256']);
  });

  it('reads 60,000 blank lines and a line of a million spaces in linear time', () => {
    const text = `${'\n'.repeat(60_000)}\tpath = vendor/lib\n${' '.repeat(1_000_000)}x\n${'\n'.repeat(60_000)}`;
    const started = performance.now();
    expect(configValues(text, 'path')).toEqual(['vendor/lib']);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
