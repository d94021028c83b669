import { scripted } from '@mada/testkit';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';

/* `--model`, `model <name>` in chat and `mada models`, against a service offering two models. */

let running: ServiceWithModel;
let home: string;

beforeAll(async () => {
  running = await startServiceWithModel({ LLM_MODEL: 'big-coder', LLM_MODELS: 'big-coder,small-coder', LLM_NUM_CTX: '16384' });
});

afterAll(async () => {
  await running?.stop();
});

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

afterEach(() => {
  expect(running.model.remaining).toBe(0);
});

const mada = (args: string[], input?: string) =>
  runMada([...args, '-a', running.service.url], { home, cwd: running.service.workspace, timeoutMs: 30_000, ...(input === undefined ? {} : { input }) });

const modelsAsked = (from: number): (string | undefined)[] => running.model.requests.slice(from).map((request) => request.model);

describe('choosing a model', () => {
  it('lists the models with their windows and the default', async () => {
    const result = await mada(['models']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('big-coder    16384 tokens · native tool calls · default\nsmall-coder  16384 tokens · native tool calls\n');
  });

  it('sends `mada run --model` to that model, and refuses one the service does not have', async () => {
    const before = running.model.requests.length;
    running.model.push(scripted.text('small answer'));
    const result = await mada(['run', '--agent', 'explore', '--model', 'small-coder', 'say hi']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('small answer\n');
    expect(result.stderr).toMatch(/ · model small-coder\n/);
    expect(modelsAsked(before)).toEqual(['small-coder']);

    const refused = await mada(['run', '--agent', 'explore', '--model', 'gpt-9', 'say hi']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Unknown model: gpt-9');
  });

  it('starts a chat on --model and switches with `model <name>` and `/model <name>`', async () => {
    const before = running.model.requests.length;
    running.model.push(scripted.text('one'), scripted.text('two'), scripted.text('three'));
    const result = await mada(['chat', '--agent', 'explore', '--model', 'small-coder'], 'first\nmodel big-coder\nsecond\n/model nope\n/model small-coder\nthird\nexit\n');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/New session [0-9a-f-]{36} · agent explore · .* · model small-coder\n/);
    expect(result.stdout).toContain('Model: big-coder\n');
    expect(result.stderr).toContain('Unknown model: nope');
    expect(modelsAsked(before)).toEqual(['small-coder', 'big-coder', 'small-coder']);
  });

  it("shows today's runs and tokens per model in `mada whoami`", async () => {
    type ByModel = { model: string | null; runs: number; tokens: number }[];
    const usedOf = async (): Promise<ByModel> => {
      const result = await mada(['whoami', '--json']);
      expect(result.code, result.stderr).toBe(0);
      return (JSON.parse(result.stdout) as { usage: { by_model: ByModel } }).usage.by_model;
    };
    const runsOf = (used: ByModel, name: string): number => used.find((entry) => entry.model === name)?.runs ?? 0;
    const before = await usedOf();
    running.model.push(scripted.text('small answer'));
    expect((await mada(['run', '--agent', 'explore', '--model', 'small-coder', 'say hi'])).code).toBe(0);
    const after = await usedOf();
    expect(runsOf(after, 'small-coder')).toBe(runsOf(before, 'small-coder') + 1);
    expect(runsOf(after, 'big-coder')).toBe(runsOf(before, 'big-coder'));

    const shown = await mada(['whoami']);
    expect(shown.code, shown.stderr).toBe(0);
    const lines = shown.stdout.split('\n');
    const today = lines.findIndex((line) => line.startsWith('today (UTC): '));
    expect(lines.slice(today + 1, today + 1 + after.length)).toEqual(after.map((used) => `  ${used.model ?? '(before models were counted)'}: ${used.runs} runs, ${used.tokens} tokens`));
    expect(after.find((used) => used.model === 'small-coder')?.tokens).toBeGreaterThan(0);
    // Four client processes: room for a loaded machine.
  }, 90_000);
});
