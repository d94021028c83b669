import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validate } from '@readme/openapi-parser';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startScriptedModel } from '@mada/testkit';
import { buildApp } from '../../src/app.js';
import { runtimeProbes } from '../../src/health/runtime-probes.js';
import { locateProgram } from '../../src/tools/sandbox/exec/program-path.js';
import { detectSandbox } from '../../src/tools/sandbox/launcher.js';
import { VERSION } from '../../src/version.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { until } from '../support/until.js';

describe('GET /', () => {
  it('names the service and its version', async () => {
    const t = await createTestApp();
    expect((await t.app.inject({ url: '/' })).json()).toEqual({ name: 'mada-api', version: VERSION, status: 'ok', docs: '/docs' });
    await t.close();
  });
});

/** `own` where slirp4netns works (bash's own network), else `host`: see network-reach.ts. */
const expectedBashNetwork = async (): Promise<string> => ((await detectSandbox({ sandboxEnabled: true })).slirpPath === undefined ? 'host' : 'own');

describe('GET /health', () => {
  it('is healthy when every check passes', async () => {
    const t = await createTestApp();
    const response = await t.app.inject({ url: '/health' });
    expect(response.json()).toEqual({
      status: 'healthy',
      version: VERSION,
      checks: { database: 'ok', model_runtime: 'ok', search_engine: 'ok', sandbox: 'bubblewrap', bash_network: await expectedBashNetwork(), ripgrep: 'ok', git: 'ok' },
      // No runtime answered introspection: LLM_NUM_CTX and native tool calls until one does.
      model: { name: 'qwen2.5-coder:7b', context_window: 32768, tool_calls: 'native' },
      // Local mode: one user, sharing with nobody.
      tenancy: 'per_user',
    });
    await t.close();
  });

  it('says when the operator disabled the sandbox (tools under the command policy alone)', async () => {
    const t = await createTestApp({ env: { SANDBOX_ENABLED: 'false' } });
    const response = await t.app.inject({ url: '/health' });
    expect(response.json()).toMatchObject({ status: 'healthy', checks: { sandbox: 'disabled', bash_network: 'host' } });
    await t.close();
  });

  it("says bash has no network with SANDBOX_NETWORK=false, and the host's (loopback included) by default", async () => {
    const off = await createTestApp({ env: { SANDBOX_NETWORK: 'false' } });
    expect((await off.app.inject({ url: '/health' })).json()).toMatchObject({ checks: { sandbox: 'bubblewrap', bash_network: 'none' } });
    await off.close();
  });

  it('says when ripgrep or git is not on the PATH the tools search', async () => {
    const path = process.env.PATH;
    // Every program the sandbox needs, without rg and git.
    const bin = mkdtempSync(join(tmpdir(), 'mada-health-bin-'));
    for (const program of ['bwrap', 'prlimit', 'slirp4netns']) {
      const found = locateProgram(program, path ?? '');
      if (found !== undefined) symlinkSync(found, join(bin, program));
    }
    process.env.PATH = bin;
    try {
      const t = await createTestApp();
      const app = await buildApp({ ...t, probes: { dependencies: {} }, logger: pino({ level: 'silent' }) });
      expect((await app.inject({ url: '/health' })).json()).toMatchObject({ status: 'healthy', checks: { ripgrep: 'missing', git: 'missing' } });
      await app.close();
      await t.close();
    } finally {
      process.env.PATH = path;
      rmSync(bin, { recursive: true, force: true });
    }
  });

  it('says when the sandbox is enabled but bubblewrap cannot be found', async () => {
    const path = process.env.PATH;
    process.env.PATH = '/nonexistent';
    try {
      const t = await createTestApp();
      const app = await buildApp({ ...t, probes: { dependencies: {} }, logger: pino({ level: 'silent' }) });
      const response = await app.inject({ url: '/health' });
      expect(response.json()).toMatchObject({ checks: { sandbox: 'unavailable' } });
      await app.close();
      await t.close();
    } finally {
      process.env.PATH = path;
    }
  });

  it('is degraded when the model runtime and search engine cannot be reached', async () => {
    const t = await createTestApp({ env: { LLM_BASE_URL: 'http://127.0.0.1:9', SEARCH_ENGINE_URL: 'http://127.0.0.1:9' } });
    const app = await buildApp({ ...t, logger: pino({ level: 'silent' }) });
    const response = await app.inject({ url: '/health' });
    expect([response.statusCode, response.json()]).toEqual([
      200,
      {
        status: 'degraded',
        version: VERSION,
        checks: { database: 'ok', model_runtime: 'unreachable', model: 'unknown', search_engine: 'unreachable', sandbox: 'bubblewrap', bash_network: await expectedBashNetwork(), ripgrep: 'ok', git: 'ok' },
        model: { name: 'qwen2.5-coder:7b', context_window: 32768, tool_calls: 'native' },
        tenancy: 'per_user',
      },
    ]);
    await app.close();
    await t.close();
  });

  it('says whether the runtime has the configured model, and is degraded while it does not', async () => {
    const model = await startScriptedModel({ models: ['qwen2.5-coder:7b', 'llama3:latest'] });
    let missing: { name: string; reason: string }[] | undefined;
    const health = async (provider: string, name: string, others = '') => {
      const url = provider === 'ollama' ? model.url : model.openaiUrl;
      const t = await createTestApp({ env: { LLM_PROVIDER: provider, LLM_BASE_URL: url, LLM_MODEL: name, LLM_MODELS: others, SEARCH_ENGINE_URL: 'http://127.0.0.1:9' } });
      // The runtime's probes as the service makes them; only the search engine is left out.
      const { unlisted, ...runtime } = runtimeProbes(t.settings);
      const app = await buildApp({ ...t, probes: { dependencies: { ...runtime, search_engine: async () => 'ok' }, unlistedModels: unlisted }, logger: pino({ level: 'silent' }) });
      const body = (await app.inject({ url: '/health' })).json<{ status: string; checks: Record<string, string>; missing_models?: { name: string; reason: string }[] }>();
      await app.close();
      await t.close();
      missing = body.missing_models;
      // One view: `checks.model` is `missing` exactly when `missing_models` names a model.
      expect(body.checks.model === 'missing').toBe(missing !== undefined && missing.length > 0);
      return [body.status, body.checks.model_runtime, body.checks.model];
    };
    try {
      expect(await health('ollama', 'qwen2.5-coder:7b')).toEqual(['healthy', 'ok', 'ok']);
      // Ollama names an untagged model by its `:latest` tag.
      expect(await health('ollama', 'llama3')).toEqual(['healthy', 'ok', 'ok']);
      expect(await health('ollama', 'qwen3:32b')).toEqual(['degraded', 'ok', 'missing']);
      expect(await health('openai', 'qwen2.5-coder:7b')).toEqual(['healthy', 'ok', 'ok']);
      expect(await health('openai', 'qwen3:32b')).toEqual(['degraded', 'ok', 'missing']);
      expect(missing?.map((entry) => entry.name)).toEqual(['qwen3:32b']);
      // Every configured model counts, not the default alone: the second one is not there.
      expect(await health('ollama', 'qwen2.5-coder:7b', 'llama3,mistral:7b')).toEqual(['degraded', 'ok', 'missing']);
      expect(missing?.map((entry) => entry.name)).toEqual(['mistral:7b']);
      expect(await health('ollama', 'qwen2.5-coder:7b', 'llama3')).toEqual(['healthy', 'ok', 'ok']);
    } finally {
      await model.close();
    }
  });

  it('says "shared" while two or more users reach the same ALLOWED_PATHS, "per_user" otherwise', async () => {
    const one = await createTestApp({ env: { API_KEYS: 'ann:ann-key-5e0b7f2c91d4', ADMIN_USERS: 'ann' } });
    const tenancy = async (t: TestApp) => (await t.app.inject({ url: '/health' })).json<{ tenancy: string }>().tenancy;
    try {
      expect(await tenancy(one)).toBe('per_user');
      // A second user without paths of their own shares ann's (seen once the 2 s answer has aged).
      expect((await one.app.inject({ method: 'POST', url: '/users', headers: { 'x-api-key': 'ann-key-5e0b7f2c91d4' }, payload: { id: 'ben' } })).statusCode).toBe(201);
      await until(() => tenancy(one), (value) => value === 'shared', 'tenancy to become shared');
    } finally {
      await one.close();
    }
    const team = { API_KEYS: 'ann:ann-key-5e0b7f2c91d4,ben:ben-key-a17c4d8e03f6' };
    const shared = await createTestApp({ env: team });
    expect(await tenancy(shared)).toBe('shared');
    await shared.close();
    const workspaces = mkdtempSync(join(tmpdir(), 'mada-health-ws-'));
    const own = await createTestApp({ env: { ...team, WORKSPACES_DIR: workspaces } });
    expect(await tenancy(own)).toBe('per_user');
    await own.close();
    rmSync(workspaces, { recursive: true, force: true });
  });

  it('is unhealthy with 503 when the database does not answer', async () => {
    const t = await createTestApp();
    await t.database.repository.close();
    const response = await t.app.inject({ url: '/health' });
    expect(response.statusCode).toBe(503);
    expect(response.json()).toMatchObject({ status: 'unhealthy', checks: { database: 'unreachable' } });
    await t.close();
  });
});

describe('OpenAPI document', () => {
  it('is valid OpenAPI 3.1 and lists every route with its schemas', async () => {
    const t = await createTestApp();
    const document = (await t.app.inject({ url: '/openapi.json' })).json();
    expect(document.openapi).toBe('3.1.0');
    const result = await validate(structuredClone(document));
    expect(result).toMatchObject({ valid: true });
    const routes = Object.entries(document.paths as Record<string, object>).flatMap(([path, ops]) =>
      Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(routes.sort()).toEqual(
      expect.arrayContaining([
        'GET /',
        'GET /health',
        'GET /agents/',
        'GET /agents/{agent_type}',
        'POST /conversations/',
        'GET /conversations/',
        'GET /conversations/{conversation_id}',
        'DELETE /conversations/{conversation_id}',
        'POST /conversations/{conversation_id}/save',
        'POST /conversations/{conversation_id}/messages',
        'POST /conversations/{conversation_id}/stream',
        'POST /agents/run',
        'POST /agents/stream',
      ]),
    );
    const create = document.paths['/conversations/'].post;
    expect(create.requestBody.content['application/json'].schema).toBeDefined();
    expect(create.responses['201'].content['application/json'].schema).toBeDefined();
    expect(document.paths['/agents/stream'].post.responses['200'].content).toHaveProperty('text/event-stream');
    await t.close();
  });

  it('is browsable at /docs', async () => {
    const t = await createTestApp();
    const page = await t.app.inject({ url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('swagger-ui');
    await t.close();
  });
});
