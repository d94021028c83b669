import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_ARGUMENT_DEPTH } from '../../src/model/index.js';
import { READ_MAX_WINDOW_CHARS } from '../../src/tools/read-file.js';
import { withHealthChecks } from '../support/health-checks.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { parseFrames } from '../support/sse.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

/**
 * EXTENSIONS.md section 1: no tool input can stall the service. A model steered by a hostile
 * repository sends native tool calls whose arguments are built to make the tool's own work
 * explode; the service runs as its own process, so a held event loop shows as GET /health going
 * unanswered while the call runs.
 */

let model: ScriptedModel;
let service: ServiceProcess;
/** The same service speaking the OpenAI protocol: the scripted model sends raw arguments verbatim there. */
let openaiService: ServiceProcess;
let workdir: string;

beforeAll(async () => {
  workdir = tempDir('mada-hostile-args-');
  model = await startScriptedModel();
  const env = { SEARCH_ENGINE_URL: model.url, ALLOWED_PATHS: workdir, LLM_NUM_CTX: '8000000', TOOL_TIMEOUT_SECONDS: '5' };
  service = await startService({ ...env, LLM_BASE_URL: model.url }, workdir);
  openaiService = await startService({ ...env, LLM_PROVIDER: 'openai', LLM_BASE_URL: `${model.url}/v1` }, workdir);
}, 60_000);

afterAll(async () => {
  service?.child.kill('SIGKILL');
  openaiService?.child.kill('SIGKILL');
  await model?.close();
});

const runTask = (prompt: string, on: ServiceProcess = service): Promise<Response> =>
  fetch(`${on.url}/agents/stream`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_type: 'task', prompt, working_dir: workdir, mode: 'auto_accept' }),
  });

/** The text of the last tool result the model was sent. */
const lastToolResult = (): string => model.requests.at(-1)?.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';

const numberedLines = (count: number, word: string): string => Array.from({ length: count }, (_, i) => `${word} ${i}`).join('\n');

describe('hostile tool-call arguments through a real run', () => {
  // The diff preview of this edit took jsdiff 20 s of the event loop: every line differs.
  it('edits 15,000 lines into 15,000 different ones, describes the change, and /health answers throughout', async () => {
    const path = join(workdir, 'rewritten.txt');
    const before = numberedLines(15_000, 'old');
    const after = numberedLines(15_000, 'new');
    writeFileSync(path, before);
    model.push(scripted.toolCalls({ name: 'edit_file', arguments: { file_path: path, old_string: before, new_string: after } }), scripted.text('done'));
    const { response, body, health } = await withHealthChecks(service.url, model, () => runTask('rewrite it'));
    expect(response.status).toBe(200);
    expect(parseFrames(body).at(-1)).toMatchObject({ event: 'done' });
    expect(readFileSync(path, 'utf8')).toBe(after);
    expect(lastToolResult()).toBe(
      `Edited ${path}: replaced 1 occurrence.\n\n(the change is too large to show as a diff: 15000 lines from line 1 on became 15000 lines)`,
    );
    expect(health.length).toBeGreaterThan(0);
    expect(health.every((status) => status === 200)).toBe(true);
  }, 90_000);

  // A limit of 10^8 held every line of the file: 900 MB of the service's memory for a 39 MB file.
  it('reads a file of two million lines with a limit of 10^8 as one window of bounded size', async () => {
    const path = join(workdir, 'numbers.txt');
    execFileSync('sh', ['-c', `seq 1 2000000 > '${path}'`]);
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: path, limit: 100_000_000 } }), scripted.text('done'));
    const { response, body, health } = await withHealthChecks(service.url, model, () => runTask('read it'));
    expect(response.status).toBe(200);
    expect(parseFrames(body).at(-1)).toMatchObject({ event: 'done' });
    const result = lastToolResult();
    expect(result.startsWith('     1\t1\n     2\t2\n')).toBe(true);
    expect(result.length).toBeLessThan(READ_MAX_WINDOW_CHARS + 1_000);
    expect(result).toMatch(
      new RegExp(`\\n\\(Showing lines 1-(\\d+); the file continues, and at most ${READ_MAX_WINDOW_CHARS} characters are returned at once\\. Call read_file with offset=\\1 to read more\\.\\)$`),
    );
    expect(health.every((status) => status === 200)).toBe(true);
  }, 90_000);

  // JSON.parse takes any depth; the event encoder's recursive walk then overflowed the stack and
  // its RangeError ended the service process.
  it.each([
    ['an array 100,000 levels deep as the pattern', `{"pattern":${'['.repeat(100_000)}${']'.repeat(100_000)}}`],
    ['an object 100,000 levels deep beside the pattern', `{"pattern":"needle","x":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`],
  ])('answers a call whose arguments are %s with an error, and the service lives on', async (_name, rawArguments) => {
    model.push(scripted.toolCalls({ name: 'grep_content', rawArguments }), scripted.text('done'));
    const { response, body, health } = await withHealthChecks(openaiService.url, model, () => runTask('search', openaiService));
    expect(response.status).toBe(200);
    expect(parseFrames(body).at(-1)).toMatchObject({ event: 'done' });
    expect(lastToolResult()).toBe(`Error: Invalid arguments for grep_content: The arguments nest objects or arrays more than ${MAX_ARGUMENT_DEPTH} levels deep`);
    expect(health.every((status) => status === 200)).toBe(true);
  }, 60_000);

  // Nothing stopped the read: a terabyte at a gigabyte or two a second, and cancelling the run did
  // not end it either.
  it('stops reading toward a far offset of a sparse terabyte file at the tool deadline', async () => {
    const path = join(workdir, 'sparse.txt');
    execFileSync('sh', ['-c', `yes line | head -c 65536 > '${path}' && truncate -s 1T '${path}'`]);
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: path, offset: 1_000_000_000_000 } }), scripted.text('done'));
    const { response, body, health } = await withHealthChecks(service.url, model, () => runTask('read the end'));
    expect(response.status).toBe(200);
    expect(parseFrames(body).at(-1)).toMatchObject({ event: 'done' });
    expect(lastToolResult()).toBe('Error: read_file timed out after 5s');
    expect(health.every((status) => status === 200)).toBe(true);
  }, 60_000);
});
