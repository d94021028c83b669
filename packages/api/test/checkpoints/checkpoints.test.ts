import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';

let model: ScriptedModel;
let t: TestApp;

const summary = scripted.text('Done.\n## Summary\n- Accomplished: changes\n- Files modified: several\n- Commands run: rm, chmod\n- Issues: none');

/** Runs `task` through the blocking legacy route and returns the run's id. */
async function runTask(mode: 'auto_accept' | 'plan' = 'auto_accept'): Promise<string> {
  const response = await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'Change things.', mode } });
  expect(response.statusCode).toBe(200);
  return response.headers['x-run-id'] as string;
}

const changes = (id: string) => t.app.inject({ method: 'GET', url: `/runs/${id}/changes` });
const revert = (id: string, force?: boolean) =>
  t.app.inject({ method: 'POST', url: `/runs/${id}/revert`, payload: force === undefined ? {} : { force } });

describe.each(DIALECTS)('checkpoints on %s', (dialect) => {
  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, model: { url: model.url } });
    writeFileSync(join(t.workdir, 'edit.txt'), 'one\ntwo\nthree\n');
    writeFileSync(join(t.workdir, 'doomed.txt'), 'bye\n');
    writeFileSync(join(t.workdir, 'script.sh'), 'echo hi\n');
    chmodSync(join(t.workdir, 'script.sh'), 0o644);
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  function scriptFourChanges(): void {
    model.push(
      scripted.toolCalls({ name: 'edit_file', arguments: { file_path: join(t.workdir, 'edit.txt'), old_string: 'two', new_string: 'TWO' } }),
      scripted.toolCalls({ name: 'write_file', arguments: { file_path: join(t.workdir, 'created.txt'), content: 'fresh\n' } }),
      scripted.toolCalls({ name: 'bash', arguments: { command: 'rm doomed.txt && chmod +x script.sh' } }),
      summary,
    );
  }

  it('reports exactly the four changes of a run, shell commands included, and reverts all four', async () => {
    scriptFourChanges();
    const id = await runTask();
    const seen = await changes(id);
    expect(seen.statusCode).toBe(200);
    const body = seen.json();
    expect(body.files).toEqual([
      { path: 'created.txt', change: 'added', additions: 1, deletions: 0 },
      { path: 'doomed.txt', change: 'deleted', additions: 0, deletions: 1 },
      { path: 'edit.txt', change: 'modified', additions: 1, deletions: 1 },
      { path: 'script.sh', change: 'modified', additions: 0, deletions: 0 },
    ]);
    expect(body.diff).toContain('-two\n+TWO\n');
    expect(body.diff).toContain('old mode 100644\nnew mode 100755');
    expect(body.diff).toContain('+fresh\n');

    const reverted = await revert(id);
    expect(reverted.statusCode).toBe(200);
    expect(reverted.json().reverted).toEqual(['created.txt', 'doomed.txt', 'edit.txt', 'script.sh']);
    expect(readFileSync(join(t.workdir, 'edit.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
    expect(readFileSync(join(t.workdir, 'doomed.txt'), 'utf8')).toBe('bye\n');
    expect(existsSync(join(t.workdir, 'created.txt'))).toBe(false);
    expect(statSync(join(t.workdir, 'script.sh')).mode & 0o111).toBe(0);
  });

  it('refuses to revert over a file changed after the run, until forced', async () => {
    scriptFourChanges();
    const id = await runTask();
    writeFileSync(join(t.workdir, 'edit.txt'), 'mine now\n');
    writeFileSync(join(t.workdir, 'doomed.txt'), 'back by hand\n');
    const refused = await revert(id);
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ detail: 'Files changed since the run: doomed.txt, edit.txt' });
    expect(readFileSync(join(t.workdir, 'edit.txt'), 'utf8')).toBe('mine now\n');
    const forced = await revert(id, true);
    expect(forced.statusCode).toBe(200);
    expect(readFileSync(join(t.workdir, 'edit.txt'), 'utf8')).toBe('one\ntwo\nthree\n');
  });

  it('takes no snapshot for a plan run', async () => {
    model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(t.workdir, 'edit.txt') } }), scripted.text('A plan.'));
    const id = await runTask('plan');
    expect((await changes(id)).json()).toEqual({ detail: 'No checkpoint for this run' });
    expect((await revert(id)).statusCode).toBe(409);
  });

  it('removes the refs of runs that no longer exist and collects the garbage', async () => {
    scriptFourChanges();
    const id = await runTask();
    expect((await changes(id)).statusCode).toBe(200);
    const store = t.database.repository.runs;
    await store.deleteRunsEndedBefore(new Date(Date.now() + 60_000));
    await t.checkpoints.sweep((runId) => store.viewRun(runId));
    const root = join(t.settings.dataDir, 'checkpoints');
    const [shadow] = readdirSync(root).filter((name) => name.endsWith('.git'));
    const refs = execFileSync('git', ['--git-dir', join(root, shadow!), 'for-each-ref', 'refs/mada/'], { encoding: 'utf8' });
    expect(refs).toBe('');
    expect((await changes(id)).statusCode).toBe(404);
  });
});

describe('checkpoint answers', () => {
  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url }, env: { CHECKPOINT_MAX_FILE_BYTES: '1000' } });
  });
  afterEach(async () => {
    await t.close();
    await model.close();
  });

  it('lists a binary file with a note and leaves out files over CHECKPOINT_MAX_FILE_BYTES, listing them', async () => {
    writeFileSync(join(t.workdir, 'big.log'), 'x'.repeat(2000));
    model.push(
      scripted.toolCalls({ name: 'bash', arguments: { command: `node -e "const fs = require('fs'); fs.writeFileSync('blob.bin', Buffer.from([97, 0, 98])); fs.writeFileSync('huge.txt', 'y'.repeat(3000))"` } }),
      summary,
    );
    const id = await runTask();
    const body = (await changes(id)).json();
    expect(body.files).toEqual([{ path: 'blob.bin', change: 'added', additions: 0, deletions: 0 }]);
    expect(body.diff).toContain('Binary files /dev/null and b/blob.bin differ');
    expect(body.diff).toContain('# Not in the checkpoint (over CHECKPOINT_MAX_FILE_BYTES): big.log');
    expect(body.diff).toContain('# Not in the checkpoint (over CHECKPOINT_MAX_FILE_BYTES): huge.txt');
    expect((await revert(id)).json()).toEqual({ reverted: ['blob.bin'] });
    expect(existsSync(join(t.workdir, 'blob.bin'))).toBe(false);
    expect(existsSync(join(t.workdir, 'huge.txt'))).toBe(true);
  });

  it('answers 404 for an unknown run, 409 while a run is in progress, and snapshots a cancelled run at its end', async () => {
    expect((await changes('00000000-0000-4000-8000-000000000000')).json()).toEqual({ detail: 'Run not found' });
    model.push(scripted.toolCalls({ name: 'bash', arguments: { command: 'echo made > made.txt' } }), scripted.stall());
    const started = await t.app.inject({ method: 'POST', url: '/runs', payload: { agent_type: 'task', prompt: 'Go.', mode: 'auto_accept' } });
    const id = started.json().id as string;
    await expect.poll(() => existsSync(join(t.workdir, 'made.txt')) && readFileSync(join(t.workdir, 'made.txt'), 'utf8')).toBe('made\n');
    expect((await changes(id)).json()).toEqual({ detail: 'Run still in progress' });
    expect((await revert(id)).json()).toEqual({ detail: 'Run still in progress' });
    expect((await t.app.inject({ method: 'POST', url: `/runs/${id}/cancel` })).statusCode).toBe(202);
    expect((await changes(id)).json().files).toEqual([{ path: 'made.txt', change: 'added', additions: 1, deletions: 0 }]);
  });

  it("answers another user's run with 403", async () => {
    await t.close();
    t = await createTestApp({ model: { url: model.url }, env: { API_KEYS: 'alice:ka,bob:kb' } });
    model.push(summary);
    const started = await t.app.inject({ method: 'POST', url: '/runs', headers: { 'x-api-key': 'ka' }, payload: { agent_type: 'task', prompt: 'Go.', mode: 'auto_accept' } });
    const id = started.json().id as string;
    const other = await t.app.inject({ method: 'GET', url: `/runs/${id}/changes`, headers: { 'x-api-key': 'kb' } });
    expect(other.statusCode).toBe(403);
    expect(other.json()).toEqual({ detail: 'Not authorized' });
    const revertOther = await t.app.inject({ method: 'POST', url: `/runs/${id}/revert`, headers: { 'x-api-key': 'kb' }, payload: {} });
    expect(revertOther.statusCode).toBe(403);
  });

  it('answers a malformed revert body with 422', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/runs/00000000-0000-4000-8000-000000000000/revert', payload: { force: 'yes' } });
    expect(response.statusCode).toBe(422);
  });
});
