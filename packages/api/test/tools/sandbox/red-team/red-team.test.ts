import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResult } from '../../../../src/tools/tool.js';
import type { Project } from '../support/project.js';
import { RED_TEAM_CASES } from './cases.js';
import { HOST_KERNEL_CASES } from './host-kernel.js';
import {
  callTool,
  createArena,
  createTemplate,
  HOST_CANARIES,
  protectedFingerprint,
  removeHostCanaries,
  sampleEventLoop,
  ROOT_CANARY,
  SECRETS,
  serviceOnlyEnvironment,
  shadowLines,
  survivors,
} from './support.js';

/*
 * Runs for real, against the sandboxed tools, with bubblewrap. A case passes when nothing happened,
 * whether the text policy refused it or the sandbox contained it.
 */

/** Longest the event loop may be held while a case's tools run. */
const MAX_STALL_MS = 100;

let secrets: string[];
let template: Project;

beforeAll(async () => {
  template = createTemplate();
  // What the service does once at start-up (probing the sandbox, staging its /etc), not a stall of any case's.
  const warmUp = createArena(template);
  await callTool(warmUp, 'bash', { command: 'git status' });
  warmUp.project.cleanup();
  let rootCanary: string[] = [];
  try {
    writeFileSync(ROOT_CANARY, `${SECRETS.root}\n`, { mode: 0o600 });
    rootCanary = [SECRETS.root];
  } catch {
    // Not root: /root is not ours to plant in, and the other cases still hold.
  }
  secrets = [SECRETS.outside, SECRETS.database, SECRETS.env, SECRETS.keyring, ...rootCanary, ...shadowLines(), ...serviceOnlyEnvironment()];
  removeHostCanaries();
}, 120_000);

afterAll(() => {
  template.cleanup();
  rmSync(ROOT_CANARY, { force: true });
  removeHostCanaries();
});

describe('red-team corpus: hostile repository content and a prompt-injected agent', () => {
  it('covers every mechanism of the threat model', () => {
    expect(RED_TEAM_CASES.length).toBeGreaterThanOrEqual(60);
  });

  it('a command of 4,000 path arguments never holds the event loop for a second (service stalled)', async () => {
    const arena = createArena(template);
    arena.plant('a', 'one line\n');
    let worst = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 5);
    try {
      const result = await callTool(arena, 'bash_readonly', { command: `ls ${'a '.repeat(4000)}`.trim() });
      expect(result.error ?? '').toBe('');
      expect(worst).toBeLessThan(1000);
    } finally {
      clearInterval(ticker);
      arena.project.cleanup();
    }
  });

  it.each([...RED_TEAM_CASES, ...HOST_KERNEL_CASES].map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const arena = createArena(template);
    let undo: (() => void) | void = undefined;
    try {
      undo = c.setup?.(arena);
      const before = protectedFingerprint(arena);
      const outsideBefore = readdirSync(arena.outside).sort();
      const results: ToolResult[] = [];
      const { longestStallMs } = await sampleEventLoop(async () => {
        if (c.racer === undefined) results.push(await callTool(arena, c.tool, c.args(arena), c.settings));
        else {
          let racing = true;
          const racer = callTool(arena, 'bash', c.racer(arena)).finally(() => (racing = false));
          while (racing) {
            results.push(await callTool(arena, c.tool, c.args(arena), c.settings));
            // A refusal settles without I/O: let the racer's process events in.
            await new Promise((resolve) => setImmediate(resolve));
          }
          results.push(await racer);
        }
      });
      c.afterwards?.(arena);
      const text = results.map((result) => `${result.data}\n${result.error}`).join('\n');
      for (const secret of secrets) expect(text, 'a secret reached the tool result').not.toContain(secret);
      for (const canary of HOST_CANARIES) expect(existsSync(canary), `${canary} was written on the host`).toBe(false);
      expect(readdirSync(arena.outside).sort(), 'something was written outside the allowed paths').toEqual(outsideBefore);
      expect(protectedFingerprint(arena), 'a protected file changed').toBe(before);
      expect(await survivors(), 'a process outlived its tool call').toEqual([]);
      // The tools run in the service's process: no case may hold its event loop (and /health).
      expect(longestStallMs, 'the event loop was held').toBeLessThan(MAX_STALL_MS);
      if (c.expectOutput !== undefined) expect(text).toMatch(c.expectOutput);
    } finally {
      if (typeof undo === 'function') undo();
      arena.project.cleanup();
      removeHostCanaries();
    }
  });
});
