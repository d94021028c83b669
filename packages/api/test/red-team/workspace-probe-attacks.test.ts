import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { quotaClient, type QuotaClient } from '../support/quota-client.js';
import { runToEnd, toolResultBefore } from '../mcp/support.js';

/*
 * Red-team corpus, tenants: bob, a user of the same service with a workspace of his own under
 * WORKSPACES_DIR, probing what alice's workspace holds (and which users have one) with paths that
 * pass through hers and climb back into his: `<ws>/alice/notes/../../bob`. Whatever alice has there,
 * bob's request must be answered exactly as for a name that exists nowhere. Judged by what bob's
 * requests and his run's tools answer, for a name that exists in hers and one that does not.
 */

const ROOT = 'root-key-8b3e1f6a2d90';
const BOB_OWN = 'bob-own-text-5e2c';

describe('probing another user\'s workspace through paths that climb back', () => {
  let model: ScriptedModel;
  let t: TestApp;
  let api: QuotaClient;
  let ws: string;
  let bob: string;

  beforeAll(async () => {
    ws = tempDir('mada-redteam-probe-');
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url }, env: { API_KEYS: `root:${ROOT}`, ADMIN_USERS: 'root', RATE_LIMIT_PER_MINUTE: '0', WORKSPACES_DIR: ws } });
    api = quotaClient(await t.app.listen({ port: 0, host: '127.0.0.1' }), ROOT);
    const alice = await api.user('alice', {});
    bob = await api.user('bob', {});
    // Each workspace is made on its user's first use.
    expect((await api.call(alice, 'GET', '/me')).status).toBe(200);
    expect((await api.call(bob, 'GET', '/me')).status).toBe(200);
    mkdirSync(join(ws, 'alice', 'acquisition-plans'));
    writeFileSync(join(ws, 'alice', 'layoffs.txt'), 'alice only');
    writeFileSync(join(ws, 'bob', 'own.txt'), BOB_OWN);
    mkdirSync(join(ws, 'bob', 'bdir'));
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  /**
   * Pairs of paths into bob's workspace (as text: path.join would fold the `..` away): the first
   * passes through something that exists where bob may not look, the second through nothing.
   */
  const probes = (rest: string): [string, string][] => [
    [`${ws}/alice/acquisition-plans/../../bob${rest}`, `${ws}/alice/no-such-plans/../../bob${rest}`],
    [`${ws}/alice/layoffs.txt/../../bob${rest}`, `${ws}/alice/no-such-file.txt/../../bob${rest}`],
    // Whether a user called alice has a workspace at all.
    [`${ws}/alice/../bob${rest}`, `${ws}/nobody-such/../bob${rest}`],
  ];

  /** An answer with the probed path taken out: what is left must not depend on what alice has. */
  const answerOf = async (response: Response, path: string): Promise<string> => `${response.status} ${(await response.text()).replaceAll(path, '<path>')}`;

  it('answers a working directory through her workspace as one through nothing, for runs and conversations', async () => {
    for (const [existing, missing] of probes('')) {
      for (const [route, body] of [
        ['/conversations/', (dir: string) => ({ agent_type: 'task', working_dir: dir })],
        ['/runs', (dir: string) => ({ agent_type: 'plan', prompt: 'probe', working_dir: dir })],
      ] as const) {
        const seen = await answerOf(await api.call(bob, 'POST', route, body(existing)), existing);
        const unseen = await answerOf(await api.call(bob, 'POST', route, body(missing)), missing);
        expect(seen, `${route} through ${existing}`).toBe(unseen);
        expect(seen).toBe('400 {"detail":"Working directory not allowed: <path>"}');
      }
    }
    // His own workspace, spelled with a climb through it, still works.
    expect((await api.call(bob, 'POST', '/conversations/', { agent_type: 'task', working_dir: `${ws}/bob/../bob` })).status).toBe(201);
  });

  it("gives his run's tools the same answer for a path through her workspace as for one through nothing", async () => {
    const paths = probes('/own.txt').flat();
    model.push(...paths.map((path) => scripted.toolCalls({ name: 'read_file', arguments: { file_path: path } })), scripted.text('done'));
    const start = model.requests.length;
    const { run } = await runToEnd(api.address, { agent_type: 'explore', working_dir: join(ws, 'bob') }, { 'x-api-key': bob });
    expect(run.status).toBe('succeeded');
    const results = paths.map((path, index) => (toolResultBefore(model, start + index + 1) ?? '').replaceAll(path, '<path>'));
    for (let index = 0; index < paths.length; index += 2) expect(results[index], paths[index]).toBe(results[index + 1]);
    for (const result of results) expect(result).not.toContain(BOB_OWN);
  });

  it('gives his bash the same answer for a glob that climbs into her workspace as for one into nothing', async () => {
    // The command policy expands globs itself (the sandbox would not show her files anyway): a
    // match, or the word left as it is, must not depend on what lies in her workspace.
    const words = [
      ['b*/../../alice/layoffs.txt', 'b*/../../alice/no-such-file.txt'],
      ['b*/../../alice/acquisition-plans/../../bob/own.txt', 'b*/../../alice/no-such-plans/../../bob/own.txt'],
      ['b*/../../alice', 'b*/../../nobody-such'],
    ];
    const commands = words.flat().map((word) => `ls -d ${word}; cat ${word}`);
    model.push(...commands.map((command) => scripted.toolCalls({ name: 'bash', arguments: { command } })), scripted.text('done'));
    const start = model.requests.length;
    const { run } = await runToEnd(api.address, { agent_type: 'task', mode: 'auto_accept', working_dir: join(ws, 'bob') }, { 'x-api-key': bob });
    expect(run.status).toBe('succeeded');
    const results = words.flat().map((word, index) => (toolResultBefore(model, start + index + 1) ?? '').replaceAll(word, '<word>'));
    for (let index = 0; index < results.length; index += 2) expect(results[index], words.flat()[index]).toBe(results[index + 1]);
    for (const result of results) expect(result).not.toContain(BOB_OWN);
  });
});
