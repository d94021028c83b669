import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted } from '@mada/testkit';
import type { ConversationDetailResponse, RunListResponse } from '@mada/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';

let running: ServiceWithModel;
let home: string;
let workspace: string;

beforeAll(async () => {
  running = await startServiceWithModel();
  workspace = running.service.workspace;
  writeFileSync(join(workspace, 'README.md'), 'mada test workspace\nsecond line\n');
  mkdirSync(join(workspace, 'src'), { recursive: true });
  writeFileSync(join(workspace, 'src', 'app.ts'), 'export const answer = 42;\n');
});

afterAll(async () => {
  await running?.stop();
});

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

afterEach(() => {
  // Every scripted turn was used: the client made exactly the runs the test meant.
  expect(running.model.remaining).toBe(0);
});

const chat = (args: string[], input: string, extra: { interruptWhen?: string } = {}) =>
  runMada(['chat', '-a', running.service.url, ...args], { home, input, ...extra });

const sessionOf = (stdout: string): string => /(?:New|Resumed) session (\S+)/.exec(stdout)![1]!;

async function stored(id: string): Promise<ConversationDetailResponse> {
  const response = await fetch(`${running.service.url}/conversations/${id}`);
  return (await response.json()) as ConversationDetailResponse;
}

/** The caller's newest stored run. */
async function latestRun(): Promise<RunListResponse['runs'][number]> {
  const response = await fetch(`${running.service.url}/runs?limit=1`);
  return ((await response.json()) as RunListResponse).runs[0]!;
}

/** The task agent reads a file, then answers. */
function readThenAnswer(file: string, answer: string): void {
  running.model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, file) } }), scripted.text(answer));
}

describe('a streamed chat turn against the service', () => {
  it('shows the tool, its result and the answer, and the service stores the turn', async () => {
    readThenAnswer('src/app.ts', 'It exports `answer`, which is **42**.');
    const result = await chat(['-d', workspace], 'what does src/app.ts export?\nexit\n');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('→ read_file src/app.ts');
    expect(result.stdout).toContain('✓ read_file: 1 export const answer = 42;');
    expect(result.stdout).toContain('It exports `answer`, which is **42**.');
    const conversation = await stored(sessionOf(result.stdout));
    expect(conversation.agent_type).toBe('task');
    expect(conversation.working_dir).toBe(workspace);
    expect(conversation.messages.map((message) => [message.role, message.content])).toEqual([
      ['user', 'what does src/app.ts export?'],
      ['assistant', 'It exports `answer`, which is **42**.'],
    ]);
    // The turn ran as a stored run of that conversation.
    const run = await latestRun();
    expect(run).toMatchObject({ conversation_id: conversation.id, prompt: 'what does src/app.ts export?', status: 'succeeded' });
    expect(run.response).toBe('It exports `answer`, which is **42**.');
  });

  it('keeps memory between turns: the second prompt carries the first exchange', async () => {
    readThenAnswer('README.md', 'The README names the workspace.');
    readThenAnswer('README.md', 'It has two lines.');
    const result = await chat(['-d', workspace], 'what is in the README?\nhow many lines?\nexit\n');
    expect(result.code).toBe(0);
    const secondPrompt = running.model.requests.at(-2)!.messages.find((message) => message.role === 'user')!.content;
    expect(secondPrompt).toContain('USER: what is in the README?');
    expect(secondPrompt).toContain('ASSISTANT: The README names the workspace.');
    expect(secondPrompt).toContain('<current_request>\nhow many lines?');
  });

  it('runs the agent in the mode the chat is in', async () => {
    readThenAnswer('README.md', 'Read-only look done.');
    await chat(['-d', workspace, '--mode', 'plan'], 'look around\n');
    const tools = running.model.requests.at(-2)!.tools.map((tool) => tool.name);
    expect(tools).toContain('read_file');
    expect(tools).not.toContain('write_file');
    expect(tools).not.toContain('bash');
  });

  it('shows a failing model as one error line and goes on with the next input', async () => {
    // 400 is not retried, so one scripted turn is the whole run.
    running.model.push(scripted.httpError(400, 'the GPU caught fire'));
    const result = await chat(['-d', workspace], 'hello?\nexit\n');
    expect(result.stderr).toMatch(/^mada: The run failed: .*the GPU caught fire.*\n$/);
    expect(result.code).toBe(1);
  });
});

describe('resuming a session', () => {
  it('continues the stored conversation with its memory', async () => {
    readThenAnswer('README.md', 'First answer about the README.');
    const first = await chat(['-d', workspace], 'summarise the README\nexit\n');
    const id = sessionOf(first.stdout);

    readThenAnswer('README.md', 'Follow-up answer.');
    const resumed = await chat(['--resume', id], 'and the second line?\nexit\n');
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain(`Resumed session ${id} · agent task · ${workspace}`);
    expect(resumed.stdout).toContain('summarise the README · 2 messages');
    expect(resumed.stdout).toContain('  assistant: First answer about the README.');
    expect(resumed.stdout).toContain('Follow-up answer.');
    const prompt = running.model.requests.at(-2)!.messages.find((message) => message.role === 'user')!.content;
    expect(prompt).toContain('USER: summarise the README');
    expect((await stored(id)).messages).toHaveLength(4);
  });

  it('says when the session does not exist', async () => {
    const result = await chat(['--resume', '00000000-0000-4000-8000-000000000000'], 'exit\n');
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      'mada: Session not found (404); it may have expired or been deleted; `mada sessions` lists the ones you have\n',
    );
  });
});

describe('without streaming', () => {
  it('sends the turn to POST /conversations/{id}/messages and prints the stored answer', async () => {
    readThenAnswer('README.md', 'Blocking answer.');
    const result = await chat(['-d', workspace, '--no-stream'], 'read the README\nexit\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Blocking answer.');
    expect(result.stdout).not.toContain('→ read_file');
    expect(running.model.requests.at(-1)!.stream).toBe(false);
    const conversation = await stored(sessionOf(result.stdout));
    expect(conversation.messages.map((message) => message.content)).toEqual(['read the README', 'Blocking answer.']);
  });
});

describe('Ctrl-C during a run', () => {
  it('cancels the run, which stops the model call, and the chat goes on', async () => {
    running.model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, 'README.md') } }), scripted.stall());
    const result = await chat(['-d', workspace], 'slow question\nexit\n', { interruptWhen: '✓ read_file' });
    expect(result.stdout).toContain('Cancelled.');
    expect(result.stdout).toContain('Resume with:');
    expect(result.code).toBe(0);
    expect(await running.model.requests.at(-1)!.outcome).toBe('client-closed');
    expect(await latestRun()).toMatchObject({ prompt: 'slow question', status: 'cancelled', error: 'Run cancelled' });
  });
});

describe('mada explore (deprecated)', () => {
  it('warns on stderr, runs the explore agent once and prints its answer', async () => {
    running.model.push(scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '**/*.ts' } }), scripted.text('One TypeScript file: src/app.ts'));
    const result = await runMada(['explore', '-a', running.service.url, '-d', workspace, 'which', 'ts', 'files?'], { home });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('mada explore is deprecated and will be removed; use `mada chat --agent explore` instead.\n');
    expect(result.stdout).toBe('One TypeScript file: src/app.ts\n');
    const sent = running.model.requests.at(-2)!.messages.map((message) => message.content).join('\n');
    expect(sent).toContain('which ts files?');
    // The agent is told where to work: the -d directory, made absolute.
    expect(sent).toContain(workspace);
    expect(running.model.requests.at(-2)!.stream).toBe(false);
  });

  it('exits 1 with the reason when the run fails', async () => {
    running.model.push(scripted.httpError(400, 'bad request to the model'));
    const result = await runMada(['explore', '-a', running.service.url, '-d', workspace, 'anything'], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/\nmada: The explore run failed: .+\n$/);
  });
});
