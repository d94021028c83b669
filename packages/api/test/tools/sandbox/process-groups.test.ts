import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Launcher } from '../../../src/tools/sandbox/exec/run-pipeline.js';
import { detectSandbox, isAvailable, SandboxLauncher, type Usable } from '../../../src/tools/sandbox/launcher.js';
import { execute, pipeline, run, sequence } from './support/invocations.js';
import { createProject, type Project } from './support/project.js';

/*
 * Stopping a sandboxed command (timeout, cancel) gives it its SIGTERM and a grace period, as an
 * unsandboxed one gets: killing the outer bubblewrap first ended the whole sandbox at once.
 */

let project: Project;
let usable: Usable;
let sandbox: SandboxLauncher;
let launcher: Launcher;

beforeAll(async () => {
  const found = await detectSandbox({ sandboxEnabled: true });
  if (!isAvailable(found)) throw new Error(`bubblewrap is required for these tests: ${found.reason}`);
  usable = found;
});

beforeEach(() => {
  project = createProject();
  const spec = { allowedPaths: [project.root], writable: true, network: false, readOnlyPaths: [], hiddenPaths: [], toolchains: [], tmpBytes: 16 * 1024 * 1024 };
  sandbox = new SandboxLauncher(usable, spec, { memoryMb: 1024, maxProcesses: 64 });
  launcher = (invocation) => sandbox.launch(invocation.executable, invocation.argv.slice(1), project.root, { status: true });
});

afterEach(() => {
  sandbox.dispose();
  project.cleanup();
});

describe('stopping a sandboxed command', () => {
  it('sends SIGTERM to the command first, so it can clean up (as git removes its lock files)', async () => {
    const note = join(project.root, 'cleaned.txt');
    // The clean-up takes a moment: a sandbox torn down at the SIGTERM would cut it short.
    const script = `trap 'sleep 0.5; echo cleaned > "$0"; exit 0' TERM; sleep 300 & wait`;
    const result = await execute(sequence(pipeline(run(['bash', '-c', script, note]))), project.root, { launcher, timeoutMs: 1500 });
    expect(result.stopped).toBe('timeout');
    expect(readFileSync(note, 'utf8')).toBe('cleaned\n');
  });
});
