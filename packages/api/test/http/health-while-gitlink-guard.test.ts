import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plantBlankGitmodules, plantPaddedNestedRepository, plantV4IndexScript, V4_INDEX_COMMAND } from '../tools/sandbox/red-team/parser-attacks.js';
import { startService, timeHealth, type ServiceProcess } from '../support/service-process.js';

/*
 * Issue #28: after each `bash` command the gitlink guard reads the index, config and `.gitmodules`
 * of the repositories around it, all of them the command's (or the cloned repository's) to write.
 * A version 4 index whose names share a prefix ran the service out of heap; a `.gitmodules` or a
 * nested repository's config of blank lines held its event loop for seconds. The service runs as
 * its own process here, so its stalls and its death are its own, not the test's.
 */

let model: ScriptedModel;
let service: ServiceProcess;
let workdir: string;
let cleanups: (() => unknown)[] = [];

const gitEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };
const git = (cwd: string, ...args: string[]): string => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, env: gitEnv, encoding: 'utf8' });

/** A repository carrying all three attacks: the index writer, a blank `.gitmodules`, a padded nested repository. */
function hostileRepository(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-guard-')));
  git(dir, 'init', '-q');
  writeFileSync(join(dir, 'notes.txt'), 'one\n');
  git(dir, 'add', 'notes.txt');
  git(dir, 'commit', '-qm', 'one');
  writeFileSync(join(dir, 'notes.txt'), 'two\n');
  plantBlankGitmodules(dir);
  plantPaddedNestedRepository(dir);
  plantV4IndexScript(dir);
  return dir;
}

beforeEach(async () => {
  workdir = hostileRepository();
  cleanups.push(() => rmSync(workdir, { recursive: true, force: true }));
  model = await startScriptedModel();
  cleanups.push(() => model.close());
  service = await startService({ LLM_BASE_URL: model.url, SEARCH_ENGINE_URL: model.url, ALLOWED_PATHS: workdir }, workdir);
  cleanups.push(() => service.child.kill('SIGKILL'));
}, 120_000);

afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});


const bash = (command: string, cwd?: string) => scripted.toolCalls({ name: 'bash', arguments: { command, ...(cwd === undefined ? {} : { cwd }) } });

describe('GET /health while the gitlink guard reads hostile repository files', () => {
  it('answers within a second throughout, and the service lives on', async () => {
    model.push(
      bash('git add notes.txt'),
      bash('git add file.txt', join(workdir, 'nested')),
      bash(V4_INDEX_COMMAND),
      scripted.text('done'),
    );
    let finished = false;
    const run = fetch(`${service.url}/agents/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'task', prompt: 'stage the changes', working_dir: workdir, mode: 'auto_accept' }),
    }).finally(() => (finished = true));
    await expect.poll(() => model.requests.length, { timeout: 30_000 }).toBeGreaterThan(0);
    const timings: number[] = [];
    while (!finished) {
      timings.push(await timeHealth(service.url));
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const response = await run;

    expect(response.status).toBe(200);
    expect(model.requests.length).toBe(4);
    expect(Math.max(...timings)).toBeLessThan(1000);
    // Alive and answering, not restarted: the same process, and /health still in time.
    expect(service.child.exitCode).toBeNull();
    expect(await timeHealth(service.url)).toBeLessThan(1000);
    // The nested repository's add took effect; the hostile index was moved aside, not left for the user's git.
    expect(existsSync(join(workdir, '.git', 'index.unchecked'))).toBe(true);
    expect(git(join(workdir, 'nested'), 'diff', '--cached', '--name-only').trim()).toBe('file.txt');
  }, 180_000);
});
