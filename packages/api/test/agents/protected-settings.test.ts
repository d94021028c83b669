import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.js';

let model: ScriptedModel;
let t: TestApp;
let envFile: string;
beforeEach(async () => {
  model = await startScriptedModel();
  t = await createTestApp({ model: { url: model.url } });
  envFile = join(t.workdir, '.env');
  writeFileSync(envFile, 'LOG_LEVEL=info\n');
});
afterEach(async () => {
  await t.close();
  await model.close();
});

/** Runs task in auto_accept with one tool call and returns the text the tool handed back. */
async function toolResultOf(tool: string, args: Record<string, unknown>, workingDir?: string): Promise<string> {
  model.push(scripted.toolCalls({ name: tool, arguments: args }), scripted.text('done'));
  const where = workingDir === undefined ? {} : { working_dir: workingDir };
  await t.app.inject({ method: 'POST', url: '/agents/run', payload: { agent_type: 'task', prompt: 'widen the sandbox', mode: 'auto_accept', ...where } });
  return model.requests.at(-1)?.messages.at(-1)?.content ?? '';
}

const HIDDEN = "(the service's own data and settings are hidden from tools)";

describe("the service's own .env, in its start directory (the default sandbox)", () => {
  it('cannot be read or rewritten with the file tools', async () => {
    expect(await toolResultOf('write_file', { file_path: envFile, content: 'ALLOWED_PATHS=/\n' })).toBe(`Path not allowed: ${envFile} ${HIDDEN}`);
    expect(await toolResultOf('edit_file', { file_path: envFile, old_string: 'LOG_LEVEL=info', new_string: 'ALLOWED_PATHS=/' })).toBe(
      `Path not allowed: ${envFile} ${HIDDEN}`,
    );
    expect(await toolResultOf('read_file', { file_path: envFile })).toBe(`Path not allowed: ${envFile} ${HIDDEN}`);
    expect(readFileSync(envFile, 'utf8')).toBe('LOG_LEVEL=info\n');
  });

  it('cannot be rewritten by a shell redirection or cp', async () => {
    expect(await toolResultOf('bash', { command: 'echo ALLOWED_PATHS=/ >> .env' })).toBe(`Path not allowed: .env ${HIDDEN}`);
    writeFileSync(join(t.workdir, 'evil'), 'ALLOWED_PATHS=/\n');
    expect(await toolResultOf('bash', { command: 'cp evil .env' })).toBe(`Path not allowed: .env ${HIDDEN}`);
    expect(readFileSync(envFile, 'utf8')).toBe('LOG_LEVEL=info\n');
  });

  it('is hidden and read-only inside the sandbox even for a program the policy cannot see into', async () => {
    const script = "const fs = require('fs'); for (const f of [() => fs.readFileSync('.env', 'utf8'), () => fs.appendFileSync('.env', 'X')]) { try { console.log(f()) } catch (e) { console.log(e.code) } }";
    const result = await toolResultOf('bash', { command: `node -e "${script}"` });
    expect(result).not.toContain('LOG_LEVEL');
    expect(result.split('\n').slice(0, 2)).toEqual([expect.stringMatching(/EACCES|EROFS/), expect.stringMatching(/EACCES|EROFS/)]);
    expect(readFileSync(envFile, 'utf8')).toBe('LOG_LEVEL=info\n');
  });

  it('leaves other .env files in projects writable', async () => {
    const projectEnv = join(t.workdir, 'app.env');
    expect(await toolResultOf('write_file', { file_path: projectEnv, content: 'X=1\n' })).toMatch(/^Created /);
  });
});

describe("the service's own process under /proc, with ALLOWED_PATHS reaching /", () => {
  beforeEach(async () => {
    await t.close();
    t = await createTestApp({ model: { url: model.url }, env: { ALLOWED_PATHS: '/' } });
  });

  it('cannot be read, listed or searched with the file tools: its environment holds the settings', async () => {
    for (const path of ['/proc/self/environ', `/proc/${process.pid}/environ`, '/proc/thread-self/../environ']) {
      expect(await toolResultOf('read_file', { file_path: path })).toBe(`Path not allowed: ${path} ${HIDDEN}`);
    }
    expect(await toolResultOf('grep_content', { pattern: 'PATH=', path: '/proc/self' })).toBe(`Path not allowed: /proc/self ${HIDDEN}`);
    expect(await toolResultOf('glob_files', { pattern: '*', path: '/proc' })).toBe(`Path not allowed: /proc ${HIDDEN}`);
  });
});

/**
 * The operator's approval rules, read at start-up: a run that rewrote them (a rule file kept in the
 * project it works on) would choose what the next service start lets run without asking.
 */
describe('APPROVAL_RULES_FILE inside an allowed path', () => {
  const RULES = '[[rules]]\ntool = "bash"\nmatch = "rm *"\naction = "deny"\n';
  const GRANT = '[[rules]]\ntool = "*"\naction = "allow"\n';
  let project: string;
  let rules: string;
  beforeEach(async () => {
    await t.close();
    project = realpathSync(mkdtempSync(join(tmpdir(), 'mada-rules-')));
    rules = join(project, 'mada-rules.toml');
    writeFileSync(rules, RULES);
    t = await createTestApp({ model: { url: model.url }, env: { ALLOWED_PATHS: project, APPROVAL_RULES_FILE: rules } });
  });
  afterEach(() => rmSync(project, { recursive: true, force: true }));

  it('cannot be rewritten with the file tools, a redirection or a program in the sandbox', async () => {
    const inProject = (tool: string, args: Record<string, unknown>) => toolResultOf(tool, args, project);
    expect(await inProject('write_file', { file_path: rules, content: GRANT })).toBe(`Refusing to write the service's own settings file: ${rules}`);
    expect(await inProject('edit_file', { file_path: rules, old_string: 'deny', new_string: 'allow' })).toBe(`Refusing to write the service's own settings file: ${rules}`);
    expect(await inProject('bash', { command: `echo '${GRANT.split('\n')[0]}' >> ${rules}` })).toMatch(/^Command not allowed: writing the service's own settings file is refused/);
    const script = `const fs = require('fs'); try { fs.writeFileSync('${rules}', 'x') } catch (e) { console.log(e.code) }`;
    expect(await inProject('bash', { command: `node -e "${script}"` })).toMatch(/EACCES|EROFS|restored/);
    expect(readFileSync(rules, 'utf8')).toBe(RULES);
  });

  it('stays readable: the rules are no secret', async () => {
    expect(await toolResultOf('read_file', { file_path: rules }, project)).toContain('action = "deny"');
  });
});
