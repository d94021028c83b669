import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRepository } from '../../src/db/open.js';
import { createTestApp, type TestApp } from '../support/app.js';

/** A size-limited tmpfs needs mount(2), so root (or CAP_SYS_ADMIN); undefined when it works here. */
function tmpfsUnavailable(): string | undefined {
  const probe = mkdtempSync(join(tmpdir(), 'mada-tmpfs-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `cannot mount a tmpfs here: ${(error as Error).message}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

/** Writes zeros until the file system refuses: ENOSPC. */
function fillUp(path: string): void {
  const block = Buffer.alloc(64 * 1024);
  const fd = openSync(path, 'w');
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
}

function integrity(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return String(db.pragma('integrity_check', { simple: true }));
  } finally {
    db.close();
  }
}

const unavailable = tmpfsUnavailable();
if (unavailable) console.warn(`disk-full fault test skipped: ${unavailable}`);

describe.skipIf(unavailable !== undefined)('DATA_DIR on a full file system', () => {
  let mountPoint: string;
  let dataDir: string;
  let t: TestApp;

  beforeAll(async () => {
    mountPoint = mkdtempSync(join(tmpdir(), 'mada-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint]);
    dataDir = join(mountPoint, 'data');
    mkdirSync(dataDir);
    const path = join(dataDir, 'mada.db');
    const url = `sqlite:///${path}`;
    const repository = await openRepository({ dialect: 'sqlite', path, url });
    t = await createTestApp({ env: { DATA_DIR: dataDir, MAX_MESSAGE_TOKENS: '1000000', MAX_MESSAGE_BYTES: '2000000' }, database: { repository, url, drop: () => repository.close() } });
  });
  afterAll(async () => {
    await t?.close();
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  const save = (id: string, n: number, size: number) =>
    t.app.inject({
      method: 'POST',
      url: `/conversations/${id}/save`,
      // Words, not one long run of a letter: the token count of such a run costs quadratic time.
      payload: { user_content: `question ${n} ${'ask '.repeat(size / 4)}`, assistant_content: `answer ${n} ${'tell '.repeat(size / 5)}` },
    });
  const messageCount = async (id: string) => ((await t.app.inject({ method: 'GET', url: `/conversations/${id}` })).json() as { messages: unknown[] }).messages.length;

  it('answers 503 to writes, keeps the database whole and readable, and writes again once space is freed', async () => {
    const id = (((await t.app.inject({ method: 'POST', url: '/conversations/', payload: { agent_type: 'explore' } })).json()) as { id: string }).id;
    for (let n = 0; n < 3; n++) expect((await save(id, n, 100)).statusCode).toBe(200);

    const filler = join(mountPoint, 'filler');
    fillUp(filler);
    const refused = await save(id, 3, 256 * 1024);
    expect(refused.statusCode).toBe(503);
    expect(refused.json()).toEqual({ detail: 'Database unavailable' });
    expect(await messageCount(id)).toBe(6);
    expect(integrity(join(dataDir, 'mada.db'))).toBe('ok');

    unlinkSync(filler);
    expect((await save(id, 4, 256 * 1024)).statusCode).toBe(200);
    expect(await messageCount(id)).toBe(8);
    expect(integrity(join(dataDir, 'mada.db'))).toBe('ok');
  });
});
