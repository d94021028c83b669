import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashReadonlyTool } from '../../src/tools/bash-readonly.js';
import { createProject, testSettings, toolContext, type Project } from './sandbox/support/project.js';

let project: Project;
beforeAll(() => {
  project = createProject();
});
afterAll(() => project.cleanup());

const call = (args: Record<string, unknown>, settings = testSettings()) =>
  bashReadonlyTool.execute(bashReadonlyTool.parameters.parse(args), toolContext(project, { settings }));

describe('bash_readonly tool', () => {
  it('declares itself read-only with SPEC parameters and tool_start args', () => {
    expect(bashReadonlyTool.name).toBe('bash_readonly');
    expect(bashReadonlyTool.readOnly).toBe(true);
    const params = bashReadonlyTool.parameters.parse({ command: 'ls' });
    expect(params).toEqual({ command: 'ls', timeout: 30 });
    expect(bashReadonlyTool.startArgs({ command: 'ls', cwd: 'src', timeout: 5 })).toEqual({ command: 'ls' });
    expect(() => bashReadonlyTool.parameters.parse({})).toThrow();
  });

  it('runs a pipeline in the working directory and returns its output', async () => {
    const result = await call({ command: 'cat notes.txt | sort | uniq -c | sort -rn | head -n 1' });
    expect(result).toMatchObject({ success: true, error: '' });
    expect(result.data.trim()).toBe('2 beta');
    expect(result.metadata).toMatchObject({ exit_code: 0, confined: true, truncated: false });
  });

  it('honours cwd relative to the working directory', async () => {
    const result = await call({ command: 'ls', cwd: 'src' });
    expect(result.data).toBe('app.ts\nutil.ts');
  });

  it('refuses a working directory outside the allowed paths', async () => {
    const result = await call({ command: 'ls', cwd: '/etc' });
    expect(result).toMatchObject({ success: false, error: 'Working directory not allowed: /etc' });
  });

  it('reports a failing command with its output and exit code', async () => {
    const result = await call({ command: 'grep -n nothing-like-this notes.txt' });
    expect(result.success).toBe(false);
    expect(result.error).toBe('(no output)\n[exit code: 1]');
    expect(result.metadata.exit_code).toBe(1);
  });

  it('shows stderr together with stdout', async () => {
    const result = await call({ command: 'ls notes.txt missing.txt' });
    expect(result.error).toMatch(/missing\.txt'?: No such file or directory/);
    expect(result.error).toContain('notes.txt');
    expect(result.error).toMatch(/\[exit code: 2\]$/);
  });

  it('refuses writes, chaining and substitutions with the reason', async () => {
    expect((await call({ command: "sed -i 's/a/b/' notes.txt" })).error).toBe('Command not allowed: sed -i in bash_readonly: edits files in place');
    expect((await call({ command: 'ls && rm notes.txt' })).error).toContain('Command not allowed: bash_readonly runs one command');
    expect((await call({ command: 'cat $(ls)' })).error).toContain('Command not allowed: command substitution');
    expect((await call({ command: 'cat ../outside/secret.txt' })).error).toBe('Path outside allowed paths: ../outside/secret.txt');
    expect((await call({ command: 'ls' + ' -la'.repeat(3000) })).error).toContain('longer than 8 KiB');
  });
});
