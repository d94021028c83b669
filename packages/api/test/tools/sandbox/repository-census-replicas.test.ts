import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openServices } from '../../../src/services.js';
import { loadSettings } from '../../../src/settings.js';
import { bashTool } from '../../../src/tools/bash.js';
import type { ToolResult } from '../../../src/tools/tool.js';
import { createToolHost, type ToolHost } from '../../../src/tools/tool-host.js';
import { createTestDatabase, openSharedDatabase, TEST_DATABASE_URL, type TestDatabase } from '../../support/databases.js';
import { createProject, nestedRepository, testSettings, toolContext, type Project } from './support/project.js';

/*
 * Two service processes (replicas) on one PostgreSQL database, sharing one directory: each has its
 * own ToolHost, census and database connection, as two processes would. A first census one takes
 * while the other's `bash` command is planting a hook must not take the hook in as the user's, or
 * its own command's check writes the hook back after the planter's check removed it. Judged by side
 * effect: the hook file, and the user's own git run outside the sandbox.
 */

let database: TestDatabase;
let shared: TestDatabase;

beforeAll(async () => {
  if (!TEST_DATABASE_URL) return;
  database = await createTestDatabase('postgres');
  shared = await openSharedDatabase(database);
});

afterAll(async () => {
  await shared?.drop();
  await database?.drop();
});

let project: Project;
/** The two replicas: each a service's tools, each recording into the shared database through its own connection. */
let hostA: ToolHost;
let hostB: ToolHost;

const path = (relative: string): string => join(project.root, relative);
const marker = (): string => join(project.outside, 'pwned');
const hook = (): string => path('vendor/lib/.git/hooks/post-checkout');

/** A `bash` command of one replica over the whole project. */
function bash(host: ToolHost, command: string, timeout = 60, workingDir = project.root): Promise<ToolResult> {
  return bashTool.execute(bashTool.parameters.parse({ command, timeout }), toolContext(project, { host, workingDir }));
}

/** A python script, run by its path, written where the commands reach. */
function script(name: string, code: string): string {
  const file = path(name);
  writeFileSync(file, `import os, time\n${code}\n`);
  return file;
}

const waitFor = (file: string): string => `while not os.path.exists(${JSON.stringify(file)}): time.sleep(0.05)`;
const touch = (file: string): string => `open(${JSON.stringify(file)}, 'w').close()`;
const plant = (): string =>
  [`open(${JSON.stringify(hook())}, 'w').write('#!/bin/sh\\ntouch ${marker()}\\n')`, `os.chmod(${JSON.stringify(hook())}, 0o755)`].join('\n');

async function until(file: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(file); i++) await sleep(50);
  expect(existsSync(file)).toBe(true);
}

/** The user's git outside the sandbox; only the marker counts. */
function userCheckout(): void {
  try {
    execFileSync('git', ['checkout', '-q', '-b', `other-${Date.now()}`], { cwd: path('vendor/lib'), env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: project.outside, GIT_CONFIG_NOSYSTEM: '1' }, stdio: 'ignore' });
  } catch {
    // a failing git is fine; a planted hook running is not
  }
}

/** One statement on the shared database, on a connection of its own. */
async function query(text: string, values: unknown[] = []): Promise<void> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    await client.query(text, values);
  } finally {
    await client.end();
  }
}

/** A command that plants the hook in vendor/lib, says so (`vendor/planted`), then runs until the test writes `vendor/go-a`. */
function planter(host: ToolHost): Promise<ToolResult> {
  return bash(host, `python3 ${script('vendor/a.py', `${plant()}\n${touch(path('vendor/planted'))}\n${waitFor(path('vendor/go-a'))}`)}`);
}

/** A command that says it started (`vendor/b-started`), then runs until the test writes `vendor/go-b`. */
function heldCommand(host: ToolHost, workingDir = project.root): Promise<ToolResult> {
  return bash(host, `python3 ${script('vendor/b.py', `${touch(path('vendor/b-started'))}\n${waitFor(path('vendor/go-b'))}`)}`, 60, workingDir);
}

/** The hook is not there, and the user's own git does not run one. */
function hookIsGone(): void {
  expect(existsSync(hook())).toBe(false);
  userCheckout();
  expect(existsSync(marker())).toBe(false);
}

/** A row as a third replica keeps it (or left it, crashing): over `root`, lapsing in `ms`. */
function strayRow(kind: 'command' | 'census', ms: number, root = project.root): Promise<void> {
  return query(`insert into sandbox_activities (id, replica, kind, roots, started_at, expires_at) values ($1, $2, $3, $4, now(), now() + $5::integer * interval '1 millisecond')`, [
    randomUUID(),
    randomUUID(),
    kind,
    JSON.stringify([root]),
    ms,
  ]);
}

describe.skipIf(!TEST_DATABASE_URL)('two replicas sharing a directory on postgres', () => {
  beforeEach(async () => {
    project = createProject();
    hostA = createToolHost({ sandboxActivity: database.repository.sandboxActivity });
    hostB = createToolHost({ sandboxActivity: shared.repository.sandboxActivity });
    // Probed before the commands, as a running service has: a slow first probe must not stand in for the wait.
    await Promise.all([hostA, hostB].map((host) => host.sandboxes.detect(testSettings())));
    nestedRepository(path('vendor/lib'));
    await query('delete from sandbox_activities');
  });

  afterEach(async () => {
    await hostA.gitlinks.close();
    await hostB.gitlinks.close();
    project.cleanup();
  });

  it('a first census in one replica waits out a command of the other that plants a hook: the hook stays gone', async () => {
    const a = planter(hostA);
    await until(path('vendor/planted'));
    // B's first command: its census would find the planted hook now.
    const b = heldCommand(hostB);
    await sleep(1000);
    // B waits for A's command (and its check) before its census, so its command has not started.
    expect(existsSync(path('vendor/b-started'))).toBe(false);
    writeFileSync(path('vendor/go-a'), '');
    expect((await a).metadata.restored_protected_files).toEqual([hook()]);
    await until(path('vendor/b-started'));
    writeFileSync(path('vendor/go-b'), '');
    const second = await b;
    // Without the agreement, B's census took the hook in as the user's and its check wrote it back.
    expect(existsSync(hook())).toBe(false);
    expect(second.metadata.restored_protected_files).toBeUndefined();
    // B's census holds no hook: a further command of B writes none back.
    expect((await bash(hostB, 'pwd')).success).toBe(true);
    hookIsGone();
  });

  it('a command of one replica, while the other\'s planter runs, puts the hook back rather than take it in as the user\'s', async () => {
    // B's census is taken first, while nothing runs: no hook.
    expect((await bash(hostB, 'pwd')).success).toBe(true);
    const a = planter(hostA);
    await until(path('vendor/planted'));
    // The hook is older than B's command (by more than the clock tick the check allows), yet younger than A's, which is still running.
    await sleep(500);
    expect((await bash(hostB, 'pwd')).metadata.restored_protected_files).toEqual([hook()]);
    expect(existsSync(hook())).toBe(false);
    const b = heldCommand(hostB);
    await until(path('vendor/b-started'));
    writeFileSync(path('vendor/go-a'), '');
    await a;
    writeFileSync(path('vendor/go-b'), '');
    await b;
    // Had B taken the hook in, its check would have written it back after A's check removed it.
    hookIsGone();
  });

  it('a command of one replica, while the other\'s planter runs, keeps no baseline of the repository around it with the hook in it', async () => {
    const inLib = path('vendor/lib');
    expect((await bash(hostB, 'pwd', 60, inLib)).success).toBe(true);
    // A works in the project, where vendor/lib is a repository it may write (and is checked after it).
    const a = planter(hostA);
    await until(path('vendor/planted'));
    await sleep(500);
    // B works in vendor/lib: its snapshot of the repository around it is taken with A's hook in it.
    const b = heldCommand(hostB, inLib);
    await until(path('vendor/b-started'));
    writeFileSync(path('vendor/go-a'), '');
    expect((await a).metadata.restored_protected_files).toEqual([hook()]);
    writeFileSync(path('vendor/go-b'), '');
    await b;
    // Had B trusted that snapshot, its put-back would have written the hook back after A's check removed it.
    hookIsGone();
  });

  it('a command waits out the other replica\'s first census over the same directory, then runs', async () => {
    // A census of the other replica in progress (as the database holds it), ending in 1.5 s.
    await strayRow('census', 1500);
    const started = performance.now();
    const result = await bash(hostB, 'pwd');
    expect(result.success).toBe(true);
    expect(performance.now() - started).toBeGreaterThan(1000);
  });

  it('a crashed replica\'s command lets a first census through once its row lapses', async () => {
    await strayRow('command', 1500);
    const started = performance.now();
    const result = await bash(hostB, 'pwd');
    expect(result.success).toBe(true);
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThan(1000);
    expect(waited).toBeLessThan(30_000);
  });

  it('refuses bash, with the reason, when the other replica\'s command outlasts the wait (fails closed)', async () => {
    await strayRow('command', 600_000);
    const result = await bash(hostB, `touch ${path('ran')}`, 1);
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^Refusing to run bash: a bash command of another service replica under an overlapping allowed path is still running/);
    expect(result.metadata.refused).toBe(true);
    expect(existsSync(path('ran'))).toBe(false);
  });

  it('refuses bash when the other replica\'s first census outlasts the wait', async () => {
    await strayRow('census', 600_000);
    const result = await bash(hostB, `touch ${path('ran')}`, 1);
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^Refusing to run bash: another service replica is taking its first inventory/);
    expect(existsSync(path('ran'))).toBe(false);
  });

  it('refuses bash when the shared database does not answer (fails closed)', async () => {
    const gone = await openSharedDatabase(database);
    await gone.drop();
    const host = createToolHost({ sandboxActivity: gone.repository.sandboxActivity });
    try {
      const result = await bash(host, `touch ${path('ran')}`);
      expect(result.success).toBe(false);
      expect(result.error).toBe('Refusing to run bash: the database through which service replicas coordinate their bash commands did not answer; try again later');
      expect(existsSync(path('ran'))).toBe(false);
    } finally {
      await host.gitlinks.close();
    }
  });

  it('a service opened on PostgreSQL records its bash commands for the other replicas', async () => {
    // As main.ts opens it: no host passed in, so the service builds its own over the database.
    const services = await openServices(loadSettings({ LOG_LEVEL: 'silent', LLM_BASE_URL: 'http://127.0.0.1:9' }, project.root), pino({ level: 'silent' }), {
      repository: shared.repository,
      startDir: project.root,
    });
    try {
      await strayRow('census', 600_000);
      const result = await bash(services.toolHost, `touch ${path('ran')}`, 1);
      expect(result.error).toMatch(/^Refusing to run bash: another service replica is taking its first inventory/);
      expect(existsSync(path('ran'))).toBe(false);
    } finally {
      await services.close();
    }
  });

  it('a directory outside the other replica\'s paths does not wait for it', async () => {
    await strayRow('command', 600_000, project.outside);
    const started = performance.now();
    expect((await bash(hostB, 'pwd')).success).toBe(true);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
