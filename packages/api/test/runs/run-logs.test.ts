import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

type Line = Record<string, unknown> & { msg: string };

/** The lines only a run writes: the run service's, the tool executor's and the model client's. */
const RUN_LINES = new Set(['run started', 'run failed', 'run ended', 'tool call', 'tool call timed out', 'tool call failed', 'model runtime call retried']);

describe('log lines of a run', () => {
  let model: ScriptedModel;
  let t: TestApp;
  let lines: Line[];

  beforeEach(async () => {
    model = await startScriptedModel();
    lines = [];
    const logger = pino({ level: 'debug' }, { write: (text: string) => void lines.push(JSON.parse(text) as Line) });
    t = await createTestApp({ model: { url: model.url }, env: { TOOL_TIMEOUT_SECONDS: '0.5' }, logger });
    writeFileSync(join(t.workdir, 'notes.txt'), 'the answer is 42\n');
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  const of = (runId: string) => lines.filter((line) => line.run_id === runId).map((line) => line.msg);

  it('carry the run_id of the run that caused them, sub-agents and timed-out tools included', async () => {
    model.push(
      scripted.toolCalls(
        { name: 'bash', arguments: { command: 'node -e "setTimeout(() => {}, 5000)"' } },
        { name: 'spawn_agent', arguments: { agent_type: 'explore', prompt: 'Read the notes' } },
      ),
      scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(t.workdir, 'notes.txt') } }),
      scripted.text('The notes say 42.'),
      scripted.text('Done.'),
    );
    const first = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Do it', mode: 'auto_accept' } });
    expect(first.json()).toMatchObject({ success: true, response: 'Done.' });
    model.push(scripted.httpError(400, 'model is broken'));
    const second = await t.app.inject({ method: 'POST', url: '/runs', payload: { agent_type: 'plan', prompt: 'Plan it' } });
    const secondId = (second.json() as { id: string }).id;
    await t.runs.finished(secondId);

    model.push(scripted.httpError(503, 'loading the model'), scripted.text('Planned.'));
    const third = await t.app.inject({ method: 'POST', url: '/runs', payload: { agent_type: 'plan', prompt: 'Plan again' } });
    const thirdId = (third.json() as { id: string }).id;
    await t.runs.finished(thirdId);

    const firstId = first.headers['x-run-id'] as string;
    expect(of(firstId)).toEqual(['run started', 'tool call timed out', 'tool call', 'tool call', 'run ended', 'request completed']);
    expect(lines.find((line) => line.run_id === firstId && line.msg === 'tool call timed out')).toMatchObject({ tool: 'bash', level: 40 });
    expect(lines.find((line) => line.run_id === firstId && line.msg === 'run ended')).toMatchObject({ agent: 'task', status: 'succeeded' });
    expect(of(secondId)).toEqual(['run started', 'run failed', 'run ended']);
    expect(lines.find((line) => line.run_id === secondId && line.msg === 'run ended')).toMatchObject({ status: 'failed', level: 30 });

    expect(of(thirdId)).toEqual(['run started', 'model runtime call retried', 'run ended']);

    // Nothing a run caused went out without its run_id.
    expect(lines.filter((line) => RUN_LINES.has(line.msg) && line.run_id === undefined)).toEqual([]);
  });
});
