import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { locateProgram } from '../../api/src/tools/sandbox/exec/program-path.js';
import { runMada, tempDir, TEST_ROOT } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';

let running: ServiceWithModel;
let home: string;

beforeAll(async () => {
  // The scripted runtime lists one model, `scripted-model`: the one this service is set to use.
  running = await startServiceWithModel({ LLM_MODEL: 'scripted-model' });
}, 150_000);

afterAll(async () => {
  await running?.stop();
});

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

const SLOW = 150_000;
const doctor = (args: string[] = [], options: { env?: Record<string, string>; cwd?: string } = {}) =>
  runMada(['doctor', '-a', running.service.url, ...args], { home, ...options, timeoutMs: 30_000 });

/** The lines of one check: its mark and name, and its fix line when it has one. */
const check = (stdout: string, name: string): string => {
  const lines = stdout.split('\n');
  const at = lines.findIndex((line) => new RegExp(`^[✔✗] ${name} {2,}`).test(line));
  if (at < 0) return '';
  const fix = lines[at + 1]?.trimStart().startsWith('fix:') ? `\n${lines[at + 1]!.trim()}` : '';
  return `${lines[at]!.replace(/ {2,}/, '  ')}${fix}`;
};

describe('mada doctor', () => {
  it('passes every check on a machine with the programs, the model and the directory in the workspace', async () => {
    const result = await doctor();
    expect(result.stdout).toContain(`✔ service`);
    expect(check(result.stdout, 'database')).toBe('✔ database  answers');
    expect(check(result.stdout, 'model runtime')).toBe('✔ model runtime  answers');
    expect(check(result.stdout, 'model')).toMatch(/^✔ model {2}scripted-model \(a window of \d+ tokens\)$/);
    expect(check(result.stdout, 'sandbox')).toBe('✔ sandbox  bubblewrap');
    expect(check(result.stdout, 'workspace')).toBe(`✔ workspace  ${home} is inside ${TEST_ROOT}`);
    expect(check(result.stdout, 'bash network')).toBe('✔ bash network  its own, through slirp4netns');
    expect(check(result.stdout, 'ripgrep')).toBe('✔ ripgrep  found');
    expect(check(result.stdout, 'git')).toBe('✔ git  found');
    expect(result.stdout).toMatch(/No problem found\.\n$/);
    expect(result.code, result.stdout).toBe(0);
  }, SLOW);

  it("names a program missing from the service's PATH and the apt-get line that installs it, and exits 1", async () => {
    // The service's PATH holds every program the tools start except ripgrep.
    const bin = tempDir('mada-cli-bin-');
    for (const program of ['bwrap', 'prlimit', 'slirp4netns', 'git']) symlinkSync(locateProgram(program, process.env.PATH ?? '')!, join(bin, program));
    const other = await startServiceWithModel({ LLM_MODEL: 'scripted-model', PATH: bin });
    try {
      const result = await runMada(['doctor', '-a', other.service.url], { home, timeoutMs: 30_000 });
      expect(check(result.stdout, 'ripgrep')).toBe(
        "✗ ripgrep  rg is not on the service's PATH: search falls back to a slower one\nfix: sudo apt-get install ripgrep on the service's machine, then start the service again",
      );
      expect(check(result.stdout, 'git')).toBe('✔ git  found');
      expect(result.stdout).toMatch(/1 problem: run the fix lines above, then mada doctor again\.\n$/);
      expect(result.code).toBe(1);
    } finally {
      await other.stop();
    }
  }, SLOW);

  it('says the configured model is not in the runtime, with the ollama pull line', async () => {
    const other = await startServiceWithModel({ LLM_MODEL: 'qwen3:32b' });
    try {
      const result = await runMada(['doctor', '-a', other.service.url], { home, timeoutMs: 30_000 });
      expect(check(result.stdout, 'model runtime')).toBe('✔ model runtime  answers');
      expect(check(result.stdout, 'model')).toBe(
        "✗ model  qwen3:32b is not in the model runtime\nfix: ollama pull qwen3:32b (or set the service's LLM_MODEL to one the runtime has)",
      );
      expect(result.code).toBe(1);
    } finally {
      await other.stop();
    }
  }, SLOW);

  it('names every configured model the runtime lacks, not the default one alone, each with its pull line', async () => {
    const other = await startServiceWithModel({ LLM_MODEL: 'scripted-model', LLM_MODELS: 'scripted-model,qwen3:32b' });
    try {
      const result = await runMada(['doctor', '-a', other.service.url], { home, timeoutMs: 30_000 });
      expect(check(result.stdout, 'model')).toMatch(/^✔ model {2}scripted-model \(a window of \d+ tokens\)$/);
      expect(result.stdout).toMatch(/^✗ model +qwen3:32b \(one of LLM_MODELS\) is not in the model runtime\n +fix: ollama pull qwen3:32b \(or take it out of the service's LLM_MODELS\)$/m);
      expect(result.code).toBe(1);
    } finally {
      await other.stop();
    }
  }, SLOW);

  it('says a directory outside the workspace is out of reach, with the ALLOWED_PATHS line that lets agents in', async () => {
    const outside = realpathSync(mkdtempSync(join(tmpdir(), 'mada-doctor-shop-')));
    try {
      const result = await doctor(['-d', outside]);
      expect(check(result.stdout, 'workspace')).toBe(
        `✗ workspace  ${outside} is outside your workspace (${TEST_ROOT}): agents cannot work there\n` +
          `fix: start the service with ALLOWED_PATHS=${TEST_ROOT},${outside} npm start, or have an admin add it to your workspace`,
      );
      expect(result.code).toBe(1);
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  }, SLOW);

  it('says when the service is not running, and how to start it', async () => {
    const cwd = join(home, 'project');
    mkdirSync(cwd);
    // A port that was free a moment ago: nothing listens there (fetch refuses well-known ports such as 9).
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const result = await runMada(['doctor', '-a', `http://127.0.0.1:${port}`], { home, cwd, timeoutMs: 30_000 });
    expect(check(result.stdout, 'service')).toBe(
      `✗ service  Cannot reach the mada service at http://127.0.0.1:${port} (connection refused)` +
        '\nfix: start it in the checkout (npm start), or point MADA_API_URL or -a/--api at it',
    );
    expect(result.code).toBe(1);
  }, SLOW);

  it('prints the checks as JSON with --json', async () => {
    const result = await doctor(['--json']);
    const report = JSON.parse(result.stdout) as { problems: number; checks: { name: string; ok: boolean }[] };
    expect(report.problems).toBe(0);
    expect(report.checks.map((c) => c.name)).toEqual(expect.arrayContaining(['service', 'database', 'model', 'workspace', 'ripgrep']));
    expect(result.code).toBe(0);
  }, SLOW);
});
