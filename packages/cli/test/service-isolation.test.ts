import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../../api/test/support/until.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';

/*
 * Every test file of the suite keeps its repositories in the same temp directory, and so do the
 * other suites run on the same machine. The service these tests start must not reach them: its
 * repository census takes a repository that appears under the allowed paths while a `bash`
 * command runs for the command's own, and strips it of the settings and hooks that run programs.
 * A hostile test repository of another file, made at that moment, lost its config that way.
 */

let running: ServiceWithModel;
let neighbour: string;

beforeAll(async () => {
  running = await startServiceWithModel();
  neighbour = realpathSync(mkdtempSync(join(tmpdir(), 'mada-neighbour-')));
});

afterAll(async () => {
  await running?.stop();
  rmSync(neighbour, { recursive: true, force: true });
});

const git = (cwd: string, ...args: string[]): string =>
  execFileSync('git', args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: neighbour, GIT_CONFIG_NOSYSTEM: '1' }, encoding: 'utf8' });

describe("the test service's allowed paths", () => {
  it("leave another test's repository, made in the temp directory while a bash command runs, as it was", { timeout: 60_000 }, async () => {
    const workspace = running.service.workspace;
    // Holds the command until the neighbour's repository is there: it shows as made during it.
    const script = "const fs = require('fs'); fs.writeFileSync('started', ''); const t = setInterval(() => { if (fs.existsSync('go')) clearInterval(t); }, 20); setTimeout(() => clearInterval(t), 20000).unref();";
    running.model.push(scripted.toolCalls({ name: 'bash', arguments: { command: `node -e "${script}"` } }), scripted.text('done'));
    const response = await fetch(`${running.service.url}/runs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'task', mode: 'auto_accept', prompt: 'wait', working_dir: workspace }),
    });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    await until(async () => existsSync(join(workspace, 'started')), Boolean, 'the command to start');

    const repo = join(neighbour, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'config', 'core.fsmonitor', join(repo, 'watch.sh'));
    git(repo, 'config', 'diff.x.command', join(repo, 'watch.sh'));
    const config = readFileSync(join(repo, '.git', 'config'), 'utf8');
    writeFileSync(join(workspace, 'go'), '');

    const ended = ['succeeded', 'failed', 'cancelled', 'interrupted'];
    const run = await until(async () => (await (await fetch(`${running.service.url}/runs/${id}`)).json()) as { status: string }, (r) => ended.includes(r.status), 'the run to end');
    expect(run.status).toBe('succeeded');
    expect(readFileSync(join(repo, '.git', 'config'), 'utf8')).toBe(config);
  });
});
