import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { childEnv, runMada, tempDir } from './support/cli-process.js';
import { startMadaService, type RunningService } from './support/service.js';

const README = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
const CI_RUN = readFileSync(fileURLToPath(new URL('../../../.ci/run', import.meta.url)), 'utf8');

/** The text of the README section under `## <title>`, up to the next one. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  expect(start, `README has a "## ${title}" section`).toBeGreaterThanOrEqual(0);
  const end = README.indexOf('\n## ', start + 1);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The variable assignment the quick start tells a newcomer to put before `npm start` for their own project. */
function readmeAllowedPaths(): string {
  const assignments = [...section('Quick start').matchAll(/^\s*(ALLOWED_PATHS=\S+)\s+npm start\b/gm)].map((match) => match[1]!);
  expect(assignments, 'the quick start shows one ALLOWED_PATHS=… npm start line').toHaveLength(1);
  return assignments[0]!;
}

/** What a shell makes of `assignment` for a user whose home is `home` (`~` and `$HOME` expanded as written). */
function asTheShellSetsIt(assignment: string, home: string): string {
  return execFileSync('bash', ['-c', `${assignment} printenv ALLOWED_PATHS`], { env: childEnv(home), encoding: 'utf8' }).trimEnd();
}

let model: ScriptedModel | undefined;
let service: RunningService | undefined;

afterEach(async () => {
  await service?.stop();
  await model?.close();
  service = model = undefined;
});

const SLOW = 150_000;

describe("the README's quick start", () => {
  it("lets a newcomer's `mada -d ~/shop` reach their own project, which the service's default refuses with the fix", async () => {
    const home = tempDir('mada-cli-newcomer-');
    const shop = join(home, 'shop');
    mkdirSync(shop);
    writeFileSync(join(shop, 'notes.txt'), 'the shop sells 12 teapots\n');
    model = await startScriptedModel();
    const chat = () => runMada(['-d', shop, '-a', service!.url], { home, input: 'how many teapots?\nexit\n', timeoutMs: 30_000 });

    // Without the setting: agents reach only the service's start directory, and the client says how to widen it.
    service = await startMadaService({ LLM_PROVIDER: 'ollama', LLM_BASE_URL: model.url, ALLOWED_PATHS: '' });
    const refused = await chat();
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`mada: The service may not work in ${shop}: it is outside your workspace (400); start the service with ALLOWED_PATHS=${shop} npm start`);
    await service.stop();

    // With the README's line, as a shell sets it for this user.
    const allowed = asTheShellSetsIt(readmeAllowedPaths(), home);
    expect(allowed).toBe(shop);
    service = await startMadaService({ LLM_PROVIDER: 'ollama', LLM_BASE_URL: model.url, ALLOWED_PATHS: allowed });
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(shop, 'notes.txt') } }), scripted.text('Twelve teapots.'));
    const reached = await chat();
    expect(reached.stderr).toBe('');
    expect(reached.stdout).toContain(shop);
    expect(reached.stdout).toContain('Twelve teapots.');
    // The agent's tool read the file in the newcomer's own directory.
    expect(JSON.stringify(model.requests.at(-1)?.messages)).toContain('the shop sells 12 teapots');
    expect(reached.code).toBe(0);
  }, SLOW);

  it('names every system package the test suite needs, as .ci/run installs them', () => {
    const installed = new Set([...CI_RUN.matchAll(/need\+=\(([\w.-]+)\)/g)].map((match) => match[1]!));
    // PostgreSQL is optional: the suites that need it skip themselves without TEST_DATABASE_URL.
    installed.delete('postgresql');
    const line = /^sudo apt-get install (.+)$/m.exec(section('Tests'))?.[1];
    expect(new Set(line?.split(/\s+/))).toEqual(installed);
  });
});
