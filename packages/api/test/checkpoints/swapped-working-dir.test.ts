import { createHash } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';
import { DIALECTS } from '../support/databases.js';

/**
 * A run's `bash` renames its working directory and puts something else at its path: a link to a
 * directory outside, another real directory, or a link in place of a directory above it. What the
 * path leads to afterwards is not the run's: its changes must show nothing of it and a revert
 * must leave it as it is, byte for byte.
 */

let model: ScriptedModel;
let t: TestApp;
let outside: string;
let project: string;

const summary = scripted.text('Done.\n## Summary\n- Accomplished: tidy\n- Files modified: a.txt\n- Commands run: mv\n- Issues: none');

/** Every file below `dir` with its mode and content digest: what "byte for byte unchanged" compares. */
function fingerprint(dir: string): Record<string, string> {
  const found: Record<string, string> = {};
  const walk = (at: string, prefix: string): void => {
    for (const name of readdirSync(at).sort()) {
      const path = join(at, name);
      const stats = lstatSync(path);
      const key = `${prefix}${name}`;
      if (stats.isDirectory()) {
        found[`${key}/`] = stats.mode.toString(8);
        walk(path, `${key}/`);
      } else found[key] = `${stats.mode.toString(8)} ${createHash('sha256').update(readFileSync(path)).digest('hex')}`;
    }
  };
  walk(dir, '');
  return found;
}

/** A run in `proj` whose one `bash` command runs `python` code there. */
async function runPython(code: string, workingDir = 'proj'): Promise<string> {
  model.push(scripted.toolCalls({ name: 'bash', arguments: { command: `python3 -c "import os; ${code}"` } }), summary);
  const response = await t.app.inject({
    method: 'POST',
    url: '/agents/run',
    payload: { agent_type: 'task', prompt: 'Tidy.', mode: 'auto_accept', working_dir: workingDir },
  });
  expect(response.statusCode).toBe(200);
  return response.headers['x-run-id'] as string;
}

const changes = (id: string) => t.app.inject({ method: 'GET', url: `/runs/${id}/changes` });
const revert = (id: string, force = false) => t.app.inject({ method: 'POST', url: `/runs/${id}/revert`, payload: { force } });

/** Each case is one or two real runs and a sandbox start: generous on a loaded machine. */
const SLOW = 60_000;

const EDIT = `open('a.txt', 'w').write('new\\n')`;

describe.each([
  ...DIALECTS.map((dialect) => ({ dialect, sandbox: 'true' })),
  // The operator's choice of no sandbox: the revert runs in the service, through the held directory.
  { dialect: 'sqlite' as const, sandbox: 'false' },
])('a working directory swapped, on $dialect with SANDBOX_ENABLED=$sandbox', ({ dialect, sandbox }) => {
  beforeEach(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ dialect, model: { url: model.url }, env: { SANDBOX_ENABLED: sandbox } });
    project = join(t.workdir, 'proj');
    mkdirSync(project);
    writeFileSync(join(project, 'a.txt'), 'old\n');
    // Outside every allowed path: a secret only the service's user may read, and a plain file.
    outside = realpathSync(mkdtempSync(join(tmpdir(), 'mada-outside-')));
    writeFileSync(join(outside, 'secret.txt'), 'the outside secret\n');
    chmodSync(join(outside, 'secret.txt'), 0o600);
    writeFileSync(join(outside, 'a.txt'), 'outside a\n');
    mkdirSync(join(outside, 'nested'));
    writeFileSync(join(outside, 'nested', 'b.txt'), 'outside b\n');
  });
  afterEach(async () => {
    await t.close();
    await model.close();
    rmSync(outside, { recursive: true, force: true });
  });

  const expectNothingFromOutside = async (id: string): Promise<void> => {
    const seen = await changes(id);
    expect(seen.statusCode).toBe(409);
    expect(seen.json().detail).toMatch(/^No checkpoint for this run: the snapshot at the end of the run failed: the working directory .* is no longer the one the run started in/);
    expect(seen.body).not.toContain('secret');
    expect(seen.body).not.toContain('outside');
  };

  const expectRevertRefused = async (id: string): Promise<void> => {
    for (const force of [false, true]) {
      const reverted = await revert(id, force);
      expect(reverted.statusCode).toBe(409);
      expect(reverted.json().detail).toMatch(
        /^Revert refused: the working directory .*\/proj is no longer the one the run started in \(moved or replaced, or reached through a symbolic link since\); nothing was reverted$/,
      );
    }
  };

  it('by nothing: an ordinary run in the same place still shows its change and reverts it', async () => {
    const id = await runPython(`${EDIT}; open('b.txt', 'w').write('added\\n')`);
    const seen = await changes(id);
    expect(seen.json().files).toEqual([
      { path: 'a.txt', change: 'modified', additions: 1, deletions: 1 },
      { path: 'b.txt', change: 'added', additions: 1, deletions: 0 },
    ]);
    expect((await revert(id)).json()).toEqual({ reverted: ['a.txt', 'b.txt'] });
    expect(fingerprint(project)).toEqual({ 'a.txt': expect.stringMatching(/^100644 /) });
    expect(readFileSync(join(project, 'a.txt'), 'utf8')).toBe('old\n');
  }, SLOW);

  it('for a link to a directory outside: its changes show nothing of it, its revert leaves it unchanged', async () => {
    const before = fingerprint(outside);
    const id = await runPython(`${EDIT}; os.rename('../proj', '../proj.old'); os.symlink('${outside}', '../proj')`);
    expect(lstatSync(project).isSymbolicLink()).toBe(true);
    const answers = [await changes(id), await revert(id, false), await revert(id, true)];
    // The side effect first: the outside directory as it was, byte for byte.
    expect(fingerprint(outside)).toEqual(before);
    for (const answer of answers) expect(answer.body).not.toContain('secret');
    await expectNothingFromOutside(id);
    expect(answers.slice(1).map((answer) => answer.statusCode)).toEqual([409, 409]);
    expect(readFileSync(join(t.workdir, 'proj.old', 'a.txt'), 'utf8')).toBe('new\n');
  }, SLOW);

  it('for another real directory made at its path: the revert leaves that one unchanged', async () => {
    const id = await runPython(`${EDIT}; os.rename('../proj', '../proj.old'); os.mkdir('../proj'); open('../proj/c.txt', 'w').write('impostor')`);
    const before = fingerprint(project);
    await expectNothingFromOutside(id);
    expect((await revert(id, true)).statusCode).toBe(409);
    expect(fingerprint(project)).toEqual(before);
  }, SLOW);

  it('for a link in place of a directory above it, to an outside directory holding one of the same name', async () => {
    rmSync(project, { recursive: true });
    project = join(t.workdir, 'outer', 'proj');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(project, 'a.txt'), 'old\n');
    mkdirSync(join(outside, 'proj'));
    writeFileSync(join(outside, 'proj', 'a.txt'), 'outside proj a\n');
    const before = fingerprint(outside);
    const id = await runPython(`${EDIT}; os.rename('../../outer', '../../outer.old'); os.symlink('${outside}', '../../outer')`, 'outer/proj');
    expect(realpathSync(project)).toBe(join(outside, 'proj'));
    await expectNothingFromOutside(id);
    for (const force of [false, true]) expect((await revert(id, force)).statusCode).toBe(409);
    expect(fingerprint(outside)).toEqual(before);
  }, SLOW);

  it("after the run ended, by another run's bash: its changes show only what it did, its revert touches nothing", async () => {
    const id = await runPython(EDIT);
    await runPython(`os.rename('proj', 'proj.old'); os.symlink('${outside}', 'proj')`, '.');
    expect(lstatSync(project).isSymbolicLink()).toBe(true);
    const before = fingerprint(outside);
    const seen = await changes(id);
    await revert(id, true);
    expect(fingerprint(outside)).toEqual(before);
    expect(seen.json().files).toEqual([{ path: 'a.txt', change: 'modified', additions: 1, deletions: 1 }]);
    expect(seen.body).not.toContain('secret');
    await expectRevertRefused(id);
    expect(readFileSync(join(t.workdir, 'proj.old', 'a.txt'), 'utf8')).toBe('new\n');
  }, SLOW);

  it('after the run ended without its end snapshot (a stopped service): the late snapshot is refused', async () => {
    const id = await runPython(EDIT);
    // As a service stopped between the run's end and its end snapshot leaves it.
    const root = join(t.settings.dataDir, 'checkpoints');
    for (const shadow of readdirSync(root).filter((name) => name.endsWith('.git'))) rmSync(join(root, shadow, 'refs', 'mada', 'runs', id, 'after'), { force: true });
    renameSync(project, `${project}.old`);
    symlinkSync(outside, project);
    const before = fingerprint(outside);
    await expectNothingFromOutside(id);
    expect((await revert(id, true)).statusCode).toBe(409);
    expect(fingerprint(outside)).toEqual(before);
  }, SLOW);
});
