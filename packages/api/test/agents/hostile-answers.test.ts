import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_CORPUS } from '../model/corpus/text-tool-calls.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { withHealthChecks as checkHealthDuring } from '../support/health-checks.js';
import { parseFrames } from '../support/sse.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

/**
 * EXTENSIONS.md sections 1 and 5: a model's answer is text a hostile repository can steer, and
 * reading calls out of it must not stall the service. The service runs as its own process, so a
 * stalled event loop there shows as GET /health going unanswered while the run is processed.
 * Before the search of an answer was made linear, each of these answers held the loop for
 * seconds to minutes.
 */

let model: ScriptedModel;
let service: ServiceProcess;
let workdir: string;

beforeAll(async () => {
  workdir = tempDir('mada-hostile-');
  writeFileSync(join(workdir, 'found.txt'), 'needle\n');
  model = await startScriptedModel();
  service = await startService({ LLM_BASE_URL: model.url, SEARCH_ENGINE_URL: model.url, ALLOWED_PATHS: workdir }, workdir);
}, 60_000);

afterAll(async () => {
  service?.child.kill('SIGKILL');
  await model?.close();
});

const post = (path: string, prompt: string): Promise<Response> =>
  fetch(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ agent_type: 'explore', prompt, working_dir: workdir }),
  });

/** Pieces of about 64 KB, as a runtime's stream delivers a long answer. */
function pieces(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += 64 * 1024) out.push(text.slice(at, at + 64 * 1024));
  return out;
}

const withHealthChecks = (request: () => Promise<Response>) => checkHealthDuring(service.url, model, request);

describe('hostile model answers through a real run', () => {
  const chosen = ['unclosed braces', 'unclosed Mistral markers', 'JSON whose repair inserts a comma per element', 'DeepSeek call with a long run of spaces'];

  // Most of these answers are far larger than the model's window, so the run ends when the next
  // request cannot fit (or finds no scripted answer); by then the call in the answer has run.
  it.each(HOSTILE_CORPUS.filter((entry) => chosen.includes(entry.name)).map((entry) => [entry.name, entry] as const))(
    'runs the real call after %s, and /health answers throughout',
    async (_name, entry) => {
      model.push(scripted.chunks(...pieces(entry.answer())));
      const { response, body, health } = await withHealthChecks(() => post('/agents/stream', 'search'));
      expect(response.status).toBe(200);
      const frames = parseFrames(body);
      expect(frames.filter((f) => f.event === 'tool_start').map((f) => [f.tool, f.args])).toEqual([['grep_content', { pattern: 'needle' }]]);
      expect(frames.find((f) => f.event === 'tool_done')).toMatchObject({ tool: 'grep_content', result_summary: expect.stringContaining('needle') });
      // The run ends either way; nothing more is scripted for it.
      expect(['done', 'error']).toContain(frames.at(-1)?.event);
      expect(health.length).toBeGreaterThan(0);
      expect(health.every((status) => status === 200)).toBe(true);
    },
    60_000,
  );

  it('streams an answer that opens with tens of thousands of blank tokens, and /health answers throughout', async () => {
    const blanks = Array.from({ length: 60_000 }, () => '\n');
    model.push(scripted.chunks(...blanks, 'The answer.'));
    const { response, body, health } = await withHealthChecks(() => post('/agents/stream', 'explain'));
    expect(response.status).toBe(200);
    const frames = parseFrames(body);
    const text = frames.filter((f) => f.event === 'chunk').map((f) => String(f.data)).join('');
    expect(text).toBe(`${'\n'.repeat(60_000)}The answer.`);
    expect(frames.filter((f) => f.event === 'tool_start')).toEqual([]);
    expect(health.every((status) => status === 200)).toBe(true);
  }, 60_000);
});
