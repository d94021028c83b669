import { startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeIntrospector } from '../../src/model/index.js';
import { modelSettings } from './model-settings.js';

let model: ScriptedModel | undefined;
let introspector: RuntimeIntrospector | undefined;

afterEach(async () => {
  await introspector?.stop();
  await model?.close();
});

const until = async (check: () => boolean): Promise<void> => {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
};

describe('RuntimeIntrospector', () => {
  it('starts with LLM_NUM_CTX when the runtime is down, and takes its window once it answers', async () => {
    model = await startScriptedModel({ runtime: { contextLength: 4096, capabilities: ['completion', 'tools'] } });
    let up = false;
    const errors: unknown[] = [];
    // The runtime refuses connections until `up`, as one that has not started yet does.
    const gatedFetch: typeof fetch = (input, init) => (up ? fetch(input, init) : fetch('http://127.0.0.1:9/', init));
    introspector = new RuntimeIntrospector(modelSettings(model, 'ollama'), { fetch: gatedFetch, intervalMs: 20, onError: (e) => errors.push(e) });
    await introspector.start();
    expect(introspector.current()).toEqual({ name: 'qwen2.5-coder:7b', contextWindow: 32768, toolCalls: 'native' });
    expect(errors.length).toBeGreaterThan(0);
    up = true;
    await until(() => introspector!.current().contextWindow === 4096);
    expect(introspector.current()).toEqual({ name: 'qwen2.5-coder:7b', contextWindow: 4096, toolCalls: 'native' });
  });

  it('asks again on its interval and stops asking once stopped', async () => {
    model = await startScriptedModel({ runtime: { maxModelLen: 2048 } });
    introspector = new RuntimeIntrospector(modelSettings(model, 'openai'), { intervalMs: 20 });
    await introspector.start();
    expect(introspector.current().contextWindow).toBe(2048);
    await until(() => model!.introspections.length >= 6);
    await introspector.stop();
    // A request aborted by stop() may still reach the server just after.
    await new Promise((resolve) => setTimeout(resolve, 50));
    const asked = model.introspections.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(model.introspections.length).toBe(asked);
  });

  it('keeps text tool calls once the runtime refused tools, whatever a refresh says', async () => {
    model = await startScriptedModel({ runtime: { contextLength: 8192, capabilities: ['completion', 'tools'] } });
    introspector = new RuntimeIntrospector(modelSettings(model, 'ollama'));
    await introspector.start();
    expect(introspector.current().toolCalls).toBe('native');
    introspector.useTextToolCalls();
    await introspector.refresh();
    expect(introspector.current()).toMatchObject({ contextWindow: 8192, toolCalls: 'text' });
  });
});
