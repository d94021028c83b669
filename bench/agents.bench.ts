import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '../packages/testkit/src/index.js';
import { createModelClient, describeTool, type ChatMessage } from '../packages/api/src/model/index.js';
import { readFileTool } from '../packages/api/src/tools/read-file.js';
import { PathSandbox } from '../packages/api/src/tools/sandbox/paths.js';
import { createTestApp, type TestApp } from '../packages/api/test/support/app.js';
import { medianMs, overhead, type Bench, type BenchResult } from './harness.js';

const STEPS = 20;

/** The engine against a bare loop doing the same model calls and tool runs with nothing else. */
async function engineOverhead(model: ScriptedModel, t: TestApp): Promise<BenchResult> {
  const file = join(t.workdir, 'small.ts');
  writeFileSync(file, 'export const x = 1;\n'.repeat(20));
  const script = () => {
    for (let i = 0; i < STEPS; i++) model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: file } }));
    model.push(scripted.text('done'));
  };
  const engineMs = await medianMs(async () => {
    script();
    await t.engine.run({ agentType: 'explore', prompt: 'read', workingDir: '.', mode: 'default', signal: new AbortController().signal, streaming: false });
  }, 15, 3);

  const client = createModelClient(t.settings);
  const sandbox = new PathSandbox(t.settings.allowedPaths);
  const tools = [describeTool(readFileTool)];
  const bareMs = await medianMs(async () => {
    script();
    const messages: ChatMessage[] = [{ role: 'system', content: 'system' }, { role: 'user', content: 'read' }];
    for (;;) {
      const turn = await client.complete({ messages, tools });
      if (turn.toolCalls.length === 0) break;
      messages.push({ role: 'assistant', content: turn.text, toolCalls: turn.toolCalls });
      for (const call of turn.toolCalls) {
        const signal = new AbortController().signal;
        const result = await readFileTool.execute({ file_path: file, offset: 0, limit: 2000 }, { workingDir: t.workdir, sandbox, settings: t.settings, host: t.toolHost, signal });
        messages.push({ role: 'tool', toolCallId: call.id, toolName: call.name, content: result.data });
      }
    }
  }, 15, 3);
  return overhead(`engine overhead per tool step (${STEPS} read_file steps, zero-latency model)`, 'bare model+tool loop', bareMs, engineMs, STEPS, 2);
}

/** Milliseconds from the model releasing its first token until `read` sees it. */
async function firstTokenLatency(model: ScriptedModel, read: () => Promise<void>, prefix: () => void): Promise<number> {
  let release!: () => void;
  let arrived!: () => void;
  const waiting = new Promise<void>((resolve) => (arrived = resolve));
  prefix();
  model.push(() => {
    arrived();
    return scripted.chunks(scripted.until(new Promise<void>((resolve) => (release = resolve))), 'first', ' token');
  });
  const reading = read();
  await waiting;
  const start = process.hrtime.bigint();
  release();
  await reading;
  return Number(process.hrtime.bigint() - start) / 1e6;
}

async function median(times: () => Promise<number>, runs: number): Promise<number> {
  const values: number[] = [];
  for (let i = 0; i < runs; i++) values.push(await times());
  values.sort((a, b) => a - b);
  return values[Math.floor(runs / 2)]!;
}

/** Reads an HTTP body until `found` says the first text has arrived, then drops the connection. */
async function readUntil(url: string, body: object, found: (text: string) => boolean): Promise<void> {
  const controller = new AbortController();
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: controller.signal });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (found(text)) break;
  }
  controller.abort();
}

const bench: Bench = async () => {
  const model = await startScriptedModel({ zeroLatency: true });
  const t = await createTestApp({ model: { url: model.url }, env: { RATE_LIMIT_PER_MINUTE: '0', AGENT_MAX_STEPS: '100' } });
  try {
    const results = [await engineOverhead(model, t)];
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const direct = await median(
      () =>
        firstTokenLatency(
          model,
          () => readUntil(`${model.url}/api/chat`, { model: t.settings.llmModel, stream: true, messages: [{ role: 'user', content: 'x' }] }, (s) => s.includes('first')),
          () => undefined,
        ),
      30,
    );
    const throughMada = await median(
      () =>
        firstTokenLatency(
          model,
          () => readUntil(`${address}/agents/stream`, { agent_type: 'task', prompt: 'go' }, (s) => s.includes('"event":"response"')),
          () => model.push(scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*.none' } })),
        ),
      30,
    );
    results.push(overhead("model's first token to the client's first response frame", 'model straight to client', direct, throughMada, 1, 5));
    return results;
  } finally {
    await t.close();
    await model.close();
  }
};

export default bench;
