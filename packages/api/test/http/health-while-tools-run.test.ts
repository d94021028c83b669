import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startService, timeHealth, type ServiceProcess } from '../support/service-process.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

/**
 * EXTENSIONS.md section 1: no tool input can stall the service, and GET /health answers within a
 * second while any tool runs. The service runs as its own process, so a stalled event loop there
 * cannot hide behind the test's own; its PATH has no ripgrep, so the JavaScript search fallback
 * (the code that could stall) does the work.
 */

const TOOL_TIMEOUT_SECONDS = 6;
const CATASTROPHIC_REGEX = '(a+)+$';
const CATASTROPHIC_GLOB = '**/*a*a*a*a*a*a*a*a*a*b';

let model: ScriptedModel;
let service: ServiceProcess;
let cleanups: (() => unknown)[] = [];
let workdir: string;

/** A file whose one line makes `(a+)+$` backtrack for ever, and a deep tree of long `a` names. */
function hostileWorkdir(): string {
  const dir = tempDir('mada-stall-');
  writeFileSync(join(dir, 'trap.txt'), `${'a'.repeat(40)}!\n`);
  writeFileSync(join(dir, 'plain.txt'), 'needle\n');
  let deep = dir;
  for (let level = 0; level < 30; level++) {
    deep = join(deep, 'a'.repeat(60));
    mkdirSync(deep);
    writeFileSync(join(deep, 'a'.repeat(200)), '');
  }
  return dir;
}

beforeEach(async () => {
  workdir = hostileWorkdir();
  model = await startScriptedModel();
  cleanups.push(() => model.close());
  const noRipgrep = tempDir('mada-empty-path-');
  service = await startService(
    {
      PATH: noRipgrep,
      LLM_BASE_URL: model.url,
      SEARCH_ENGINE_URL: model.url,
      ALLOWED_PATHS: workdir,
      TOOL_TIMEOUT_SECONDS: String(TOOL_TIMEOUT_SECONDS),
    },
    workdir,
  );
  cleanups.push(() => service.child.kill('SIGKILL'));
}, 60_000);

afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

const runAgent = (prompt: string): Promise<Response> =>
  fetch(`${service.url}/agents/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_type: 'explore', prompt, working_dir: workdir }),
  });


/** The tool results the model was last sent back, by tool name. */
function toolResults(): Map<string, string> {
  const names = new Map<string, string>();
  const results = new Map<string, string>();
  for (const message of model.requests.at(-1)?.messages ?? []) {
    for (const call of message.toolCalls ?? []) names.set(call.id ?? '', call.name);
    if (message.role === 'tool') results.set(names.get(message.toolCallId ?? '') ?? '', message.content);
  }
  return results;
}

describe('GET /health while a tool runs a catastrophic pattern', () => {
  it('answers within a second, and the tools end with an answer or a timeout error', async () => {
    // A first, ordinary search proves the fallback is the backend in use and warms its workers.
    model.push(scripted.toolCalls({ name: 'grep_content', arguments: { pattern: 'needle' } }), scripted.text('found'));
    expect((await runAgent('find the needle')).status).toBe(200);
    expect(toolResults().get('grep_content')).toBe(`${join(workdir, 'plain.txt')}:1: needle`);

    model.push(
      scripted.toolCalls(
        { name: 'glob_files', arguments: { pattern: CATASTROPHIC_GLOB } },
        { name: 'grep_content', arguments: { pattern: CATASTROPHIC_REGEX } },
      ),
      scripted.text('done'),
    );
    const requestsBefore = model.requests.length;
    const run = runAgent('search the trap');
    await expect.poll(() => model.requests.length, { timeout: 30_000 }).toBe(requestsBefore + 1);

    // The tools are running from here until the model is asked again, at the tool's deadline.
    const timings: number[] = [];
    for (let check = 0; check < 5; check++) {
      timings.push(await timeHealth(service.url));
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const stillRunning = model.requests.length === requestsBefore + 1;

    expect((await run).status).toBe(200);
    expect(stillRunning).toBe(true);
    for (const elapsed of timings) expect(elapsed).toBeLessThan(1000);
    const results = toolResults();
    expect(results.get('glob_files')).toBe(`No files found matching ${CATASTROPHIC_GLOB} in ${workdir}`);
    expect(results.get('grep_content')).toBe(`Error: grep_content timed out after ${TOOL_TIMEOUT_SECONDS}s`);
  }, 90_000);
});
