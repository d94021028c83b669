import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp } from '../support/app.js';
import { createTestDatabase, DIALECTS } from '../support/databases.js';
import { startService, TSX } from '../support/service-process.js';

const CLI = fileURLToPath(new URL('../../src/users-cli.ts', import.meta.url));

interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run users -- ...` on the database at `url`, as an operator runs it. */
function users(url: string, cwd: string, ...args: string[]): Promise<Printed> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--conditions=mada-source', '--import', TSX, CLI, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATABASE_URL: url }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
    );
  });
}

describe.each(DIALECTS)('npm run users on %s', { timeout: 60_000 }, (dialect) => {
  let cwd: string;
  beforeAll(() => {
    cwd = mkdtempSync(join(tmpdir(), 'mada-users-cli-'));
  });
  afterAll(() => rmSync(cwd, { recursive: true, force: true }));

  it('makes the first admin on a fresh database with the service stopped, and more users while it runs', async () => {
    const database = await createTestDatabase(dialect);
    const first = await users(database.url, cwd, 'add', 'alice', '--admin');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^mada_[0-9A-Za-z]{43}\n$/);
    expect(first.stderr).toMatch(/shown once/);
    const aliceKey = first.stdout.trim();

    // No API_KEYS: the stored user makes the service keyed.
    const t = await createTestApp({ dialect, database });
    try {
      const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
      const me = (key?: string) => fetch(`${address}/me`, { headers: key ? { 'x-api-key': key } : {} });
      expect((await me()).status).toBe(401);
      expect(await (await me(aliceKey)).json()).toMatchObject({ id: 'alice', role: 'admin' });

      const second = await users(database.url, cwd, 'add', 'bob');
      expect(second.code, second.stderr).toBe(0);
      expect(await (await me(second.stdout.trim())).json()).toMatchObject({ id: 'bob', role: 'member' });

      if (dialect === 'sqlite') {
        // Another key for a user who lost theirs; the first one keeps working.
        const another = await users(database.url, cwd, 'key', 'alice', '--key-name', 'spare');
        expect(another.code, another.stderr).toBe(0);
        expect(await (await me(another.stdout.trim())).json()).toMatchObject({ id: 'alice' });
        expect((await me(aliceKey)).status).toBe(200);
      }
      const again = await users(database.url, cwd, 'add', 'alice');
      expect([again.code, again.stdout, again.stderr]).toEqual([1, '', 'users: User already exists\n']);
      // Only the digests are in the database.
      expect(JSON.stringify(await t.database.repository.users.listKeys('alice'))).not.toContain(aliceKey.slice(5));
    } finally {
      await t.close();
    }
  });

  it.runIf(dialect === 'sqlite')('starts keyed on a database with a stored user, says so, and may then listen beyond loopback', async () => {
    const url = `sqlite:///${join(cwd, 'keyed.db')}`;
    const added = await users(url, cwd, 'add', 'kim', '--admin');
    expect(added.code, added.stderr).toBe(0);
    const service = await startService({ DATABASE_URL: url, HOST: '0.0.0.0', LLM_BASE_URL: 'http://127.0.0.1:9' }, cwd);
    try {
      expect(service.output()).toContain('keyed mode: every request needs a key');
      expect(service.output()).not.toContain('local mode');
      const me = await fetch(`${service.url}/me`, { headers: { 'x-api-key': added.stdout.trim() } });
      expect(await me.json()).toMatchObject({ id: 'kim', role: 'admin' });
    } finally {
      service.child.kill('SIGTERM');
      await service.exited;
    }
  });

  it('stores the workspace paths given with --workspace, resolved, and refuses one inside another user\'s', async () => {
    const database = await createTestDatabase(dialect);
    try {
      mkdirSync(join(cwd, 'proj', 'sub'), { recursive: true });
      // Relative to where the command runs.
      const added = await users(database.url, cwd, 'add', 'alice', '--workspace', 'proj');
      expect(added.code, added.stderr).toBe(0);
      expect(JSON.parse((await database.repository.users.findUser('alice'))!.workspacePaths)).toEqual([realpathSync(join(cwd, 'proj'))]);
      const inside = join(cwd, 'proj', 'sub');
      expect(await users(database.url, cwd, 'add', 'bob', '--workspace', inside)).toEqual({ code: 1, stdout: '', stderr: `users: Workspace overlaps another user's: ${inside}\n` });
      const missing = join(cwd, 'nowhere');
      expect(await users(database.url, cwd, 'add', 'bob', '--workspace', missing)).toEqual({ code: 1, stdout: '', stderr: `users: Workspace path does not exist: ${missing}\n` });
      expect(await database.repository.users.findUser('bob')).toBeUndefined();
    } finally {
      await database.drop();
    }
  });

  it.runIf(dialect === 'sqlite')('refuses an id that could escape a directory, and says how it is used', async () => {
    const url = `sqlite:///${join(cwd, 'unused.db')}`;
    for (const id of ['..', 'a/b']) {
      const refused = await users(url, cwd, 'add', id);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/invalid user id[\s\S]*usage: npm run users -- add <id>/);
    }
  });
});
