import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TSX } from './support/service-process.js';

const CLI = fileURLToPath(new URL('../src/policy-cli.ts', import.meta.url));
const ROOT_PACKAGE = fileURLToPath(new URL('../../../package.json', import.meta.url));

interface Printed {
  code: number;
  stdout: string;
  stderr: string;
}

describe('npm run policy', { timeout: 180_000 }, () => {
  let start: string;
  let project: string;

  beforeAll(() => {
    // The service's start directory (ALLOWED_PATHS defaults to it) with a project inside.
    start = realpathSync(mkdtempSync(join(tmpdir(), 'mada-policy-')));
    project = join(start, 'project');
    mkdirSync(project);
    writeFileSync(join(project, 'a.txt'), 'a\n');
    writeFileSync(join(start, 'b.txt'), 'b\n');
    writeFileSync(join(project, 'rules.toml'), '[[rules]]\ntool = "bash"\nmatch = "rm"\naction = "allow"\n');
  });
  afterAll(() => rmSync(start, { recursive: true, force: true }));

  /** The CLI as the root script runs it, in the start directory, typed in `project` (INIT_CWD). */
  function policy(...args: string[]): Promise<Printed> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        ['--conditions=mada-source', '--import', TSX, CLI, ...args],
        { cwd: start, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', INIT_CWD: project }, timeout: 60_000 },
        (error, stdout, stderr) => resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout, stderr }),
      );
    });
  }

  it('is the root package script', () => {
    const scripts = (JSON.parse(readFileSync(ROOT_PACKAGE, 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.policy).toContain('packages/api/src/policy-cli.ts');
  });

  it('prints ask and both reasons for a default rule on a change outside the working directory', async () => {
    const printed = await policy('rm ../b.txt');
    expect(printed).toMatchObject({ code: 0, stderr: '' });
    expect(printed.stdout).toBe(
      [
        'ask',
        '  approval rule bash "rm" (ask)',
        `  rm changes ${join(start, 'b.txt')}, outside the run's working directory ${project}: reverting this run will not undo it`,
        `  acts on: ${project}, ${join(start, 'b.txt')}`,
        `  working directory: ${project}`,
        '',
      ].join('\n'),
    );
  });

  it("judges with --rules instead of the defaults: the operator's allow rule runs it", async () => {
    const printed = await policy('--rules', 'rules.toml', 'rm ../b.txt');
    expect(printed.stdout.split('\n').slice(0, 2)).toEqual(['allow', '  approval rule bash "rm" (allow)']);
  });

  it('denies what the mode does not offer, and what the command policy refuses', async () => {
    const plan = await policy('--mode', 'plan', 'ls');
    expect(plan.stdout.split('\n')[0]).toBe('deny');
    expect(plan.stdout).toContain('bash is not offered in mode plan');
    const curl = await policy('--cwd', '.', 'curl https://example.com');
    expect(curl.stdout.split('\n').slice(0, 2)).toEqual(['deny', '  the command policy refuses it, whatever the rules say: Command not allowed: curl: network programs are refused']);
  });

  it('says what is wrong with the question, with status 2', async () => {
    const printed = await policy('--mode', 'yolo', 'ls');
    expect(printed.code).toBe(2);
    expect(printed.stdout).toBe('');
    expect(printed.stderr).toMatch(/^policy: --mode: expected one of default, plan, auto_accept\nusage: npm run policy/);
    const outside = await policy('--cwd', '/', 'ls');
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain('working directory / is outside ALLOWED_PATHS');
  });
});
