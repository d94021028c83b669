import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { judgeCall } from '../../../src/agents/approval-check.js';
import { bashTool } from '../../../src/tools/bash.js';
import { bashReadonlyTool } from '../../../src/tools/bash-readonly.js';
import { checkCommand, type ShellToolName } from '../../../src/tools/sandbox/command-policy/index.js';
import { childEnvironment } from '../../../src/tools/sandbox/exec/environment.js';
import { locateProgram } from '../../../src/tools/sandbox/exec/program-path.js';
import { readCorpus } from './corpus.js';
import { createProject, toolContext, type Project } from './support/project.js';

const corpus = readCorpus();
const denied = corpus.filter((c) => c.verdict === 'deny');
const allowed = corpus.filter((c) => c.verdict === 'allow');
/** What the policy lets run: benign lines, and those the approval rules ask about first. */
const runnable = corpus.filter((c) => c.verdict !== 'deny');
const label = (c: { line: number; tool: string; command: string }): string => `${c.tool} line ${c.line}: ${JSON.stringify(c.command)}`;
const toolFor = (tool: ShellToolName) => (tool === 'bash' ? bashTool : bashReadonlyTool);

describe('command corpus', () => {
  it('holds at least 150 commands, 60 of them benign', () => {
    expect(new Set(corpus.map((c) => c.line)).size).toBeGreaterThanOrEqual(150);
    expect(new Set(allowed.map((c) => c.line)).size).toBeGreaterThanOrEqual(60);
  });
});

describe('hostile commands are refused before anything runs', () => {
  let project: Project;
  beforeAll(() => {
    project = createProject();
  });
  afterAll(() => project.cleanup());

  it.each(denied.map((c) => [label(c), c] as const))('%s', async (_name, c) => {
    const env = childEnvironment(process.env, project.sandbox.roots);
    const request = {
      tool: c.tool,
      command: c.command,
      cwd: project.root,
      baseDir: project.root,
      sandbox: project.sandbox,
      home: env.HOME ?? '/',
      locate: (name: string) => locateProgram(name, env.PATH as string),
    };
    const error = await checkCommand(request).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(error, 'the policy allowed it').toBeInstanceOf(Error);
    expect(error?.message).toMatch(/^(Command not allowed|Path outside allowed paths|Working directory not allowed): /);
    if (c.fragment !== undefined) expect(error?.message).toContain(c.fragment);
  });
});

describe('allowed commands run and succeed, benign ones without asking, the rest once approved', () => {
  // Read-only commands share one project; each bash line gets its own, since it may change files.
  let shared: Project;
  beforeAll(() => {
    shared = createProject();
  });
  afterAll(() => shared.cleanup());

  it.each(runnable.map((c) => [label(c), c] as const))('%s', async (_name, c) => {
    const project = c.tool === 'bash' ? createProject() : shared;
    try {
      const tool = toolFor(c.tool);
      const params = tool.parameters.parse({ command: c.command });
      const context = toolContext(project);
      expect(judgeCall(c.tool, params, context).action, 'the default approval rules').toBe(c.verdict);
      const result = await tool.execute(params, context);
      expect(result.error).toBe('');
      expect(result.success).toBe(true);
      expect(result.metadata.exit_code).toBe(0);
    } finally {
      if (project !== shared) project.cleanup();
    }
  });
});
