import { mkdtempSync, readlinkSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProtectedSnapshot } from '../../../src/tools/sandbox/protected-snapshot.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mada-protected-snapshot-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the protected-file snapshot', () => {
  it('puts back a link to a name that is not UTF-8 with its very bytes', () => {
    const target = Buffer.concat([Buffer.from('../shared-hooks-'), Buffer.from([0xff])]);
    const hooks = join(dir, 'hooks');
    symlinkSync(target, hooks);
    const snapshot = ProtectedSnapshot.take([hooks]);
    unlinkSync(hooks);
    symlinkSync('/tmp/planted-hooks', hooks);
    expect(snapshot.restore()).toEqual([hooks]);
    expect(readlinkSync(hooks, { encoding: 'buffer' })).toEqual(target);
  });
});
