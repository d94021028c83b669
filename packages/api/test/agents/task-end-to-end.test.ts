import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type RecordedRequest, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { parseFrames } from '../support/sse.js';

let model: ScriptedModel;
let t: TestApp;
beforeEach(async () => {
  model = await startScriptedModel();
  t = await createTestApp({ model: { url: model.url } });
  writeFileSync(join(t.workdir, 'math.mjs'), 'export const add = (a, b) => a - b;\n');
  writeFileSync(
    join(t.workdir, 'math.test.mjs'),
    "import assert from 'node:assert/strict';\nimport { add } from './math.mjs';\nassert.equal(add(2, 3), 5);\nconsole.log('all tests passed');\n",
  );
});
afterEach(async () => {
  await t.close();
  await model.close();
});

const lastToolResult = (request: RecordedRequest) => request.messages.filter((m) => m.role === 'tool').at(-1)?.content ?? '';

describe('task in auto_accept, end to end', () => {
  it('fixes a failing test by reading, editing and running it, and the file on disk changes', async () => {
    const file = join(t.workdir, 'math.mjs');
    model.push(
      scripted.toolCalls({ name: 'bash', arguments: { command: 'node math.test.mjs' } }),
      (request) => {
        // The model only goes on if the test really failed.
        expect(lastToolResult(request)).toContain('[exit code: 1]');
        return scripted.toolCalls({ name: 'read_file', arguments: { file_path: file } });
      },
      scripted.toolCalls({ name: 'edit_file', arguments: { file_path: file, old_string: 'a - b', new_string: 'a + b' } }),
      scripted.toolCalls({ name: 'bash', arguments: { command: 'node math.test.mjs' } }),
      (request) =>
        scripted.text(
          lastToolResult(request).includes('all tests passed')
            ? 'Fixed add.\n## Summary\n- Accomplished: fixed add\n- Files modified: math.mjs\n- Commands run: node math.test.mjs\n- Issues: none'
            : 'The test still fails.',
        ),
    );
    const response = await t.app.inject({
      method: 'POST',
      url: '/agents/stream',
      payload: { agent_type: 'task', prompt: 'The test fails. Fix it.', mode: 'auto_accept' },
    });
    const frames = parseFrames(response.body);
    expect(frames.filter((f) => f.event === 'tool_start').map((f) => f.tool)).toEqual(['bash', 'read_file', 'edit_file', 'bash']);
    expect(frames.find((f) => f.event === 'tool_start' && f.tool === 'bash')?.args).toEqual({ command: 'node math.test.mjs' });
    expect(readFileSync(file, 'utf8')).toBe('export const add = (a, b) => a + b;\n');
    expect(frames.filter((f) => f.event === 'response').map((f) => f.text).join('')).toMatch(/^Fixed add\.\n## Summary/);
    expect(frames.at(-1)).toEqual({ event: 'done', mode: 'auto_accept' });
  });

  it('never offers a write tool in plan mode, so the same request cannot change the file', async () => {
    model.push(scripted.toolCalls({ name: 'edit_file', arguments: { file_path: join(t.workdir, 'math.mjs'), old_string: 'a - b', new_string: 'a + b' } }), scripted.text('cannot'));
    await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Fix it.', mode: 'plan' } });
    expect(model.requests[0]?.tools.map((tool) => tool.name)).not.toContain('edit_file');
    expect(lastToolResult(model.requests[1]!)).toMatch(/^Error: Unknown tool 'edit_file'/);
    expect(readFileSync(join(t.workdir, 'math.mjs'), 'utf8')).toContain('a - b');
  });
});
