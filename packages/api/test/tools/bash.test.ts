import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashTool } from '../../src/tools/bash.js';
import { createProject, testSettings, toolContext, type Project } from './sandbox/support/project.js';

let project: Project;
beforeAll(() => {
  project = createProject();
});
afterAll(() => project.cleanup());

const call = (args: Record<string, unknown>, overrides: Parameters<typeof toolContext>[1] = {}) =>
  bashTool.execute(bashTool.parameters.parse(args), toolContext(project, overrides));

describe('bash tool', () => {
  it('has SPEC parameters, defaults and tool_start args', () => {
    expect(bashTool.readOnly).toBe(false);
    expect(bashTool.parameters.parse({ command: 'ls' })).toEqual({ command: 'ls', timeout: 60 });
    expect(bashTool.startArgs({ command: 'ls', cwd: 'src', timeout: 5 })).toEqual({ command: 'ls', cwd: 'src' });
  });

  it('runs lists, redirections and here-documents inside bubblewrap', async () => {
    const result = await call({ command: "cat > made.txt <<'EOF'\nline one\nEOF\nwc -l < made.txt && echo ok || echo failed" });
    expect(result).toMatchObject({ success: true, data: '1\nok' });
    expect(result.metadata).toMatchObject({ confined: true, exit_code: 0 });
    expect(readFileSync(join(project.root, 'made.txt'), 'utf8')).toBe('line one\n');
  });

  it('runs without bubblewrap when the sandbox is disabled', async () => {
    const result = await call({ command: 'echo plain' }, { settings: testSettings({ sandboxEnabled: false }) });
    expect(result).toMatchObject({ success: true, data: 'plain', metadata: { confined: false } });
  });

  it('caps the timeout at tool_timeout_seconds and stops everything', async () => {
    const started = Date.now();
    const result = await call(
      { command: "python3 -c 'import time; print(\"started\", flush=True); time.sleep(60)'", timeout: 60 },
      // Not 1 s: starting python through a version manager's shim inside the sandbox can take that long on a busy machine.
      { settings: testSettings({ toolTimeoutSeconds: 3 }) },
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.success).toBe(false);
    expect(result.error).toBe('started\n[timed out after 3 s: all processes were stopped]');
    expect(result.metadata.timed_out).toBe(true);
  });

  it('stops when the run is cancelled', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    const result = await call({ command: "python3 -c 'import time; time.sleep(60)'" }, { signal: controller.signal });
    expect(result.error).toBe('(no output)\n[cancelled: all processes were stopped]');
  });

  it('cuts output at 50,000 characters and says so', async () => {
    const result = await call({ command: "python3 -c 'print(\"x\" * 200000)'" });
    expect(result.success).toBe(true);
    expect(result.data).toBe(`${'x'.repeat(50_000)}\n[output truncated: only the first 50000 characters are shown]`);
    expect(result.metadata.truncated).toBe(true);
  });

  it('does not show the service environment to commands', async () => {
    process.env.MADA_BASH_TEST_SECRET = 'hunter2';
    try {
      const result = await call({ command: 'env' });
      expect(result.success).toBe(true);
      expect(result.data).not.toContain('hunter2');
    } finally {
      delete process.env.MADA_BASH_TEST_SECRET;
    }
  });

  it('checks each command again when its turn comes (a symlink made by an earlier command)', async () => {
    const result = await call({ command: "python3 -c 'import os; os.symlink(\"/etc/hostname\", \"late-link\")' && cat late-link" });
    expect(result.success).toBe(false);
    expect(result.error).toBe('(no output)\nPath outside allowed paths: late-link');
  });

  it('refuses before running anything when any command is refused', async () => {
    const result = await call({ command: 'touch first.txt; rm -rf src' });
    expect(result).toMatchObject({ success: false, error: 'Command not allowed: rm -r: recursive removal is refused; rm takes one file at a time' });
    expect(result.metadata.refused).toBe(true);
    expect(() => readFileSync(join(project.root, 'first.txt'))).toThrow();
  });

  it('reports the last exit code and keeps the output before it', async () => {
    const result = await call({ command: 'echo before; ls missing-file' });
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/^before\n.*missing-file.*\n\[exit code: 2\]$/s);
  });
});
