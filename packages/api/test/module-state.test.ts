import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createToolHost } from '../src/tools/tool-host.js';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/**
 * Module-scope state that decides nothing about security, each with why. What the tools learn of
 * the machine (whether the sandbox works, where toolchains live, which search backend runs) lives
 * in the ToolHost the composition root builds, and so does the gitlink guard with its memory of
 * the gitlinks it took out; never here.
 */
const HARMLESS: Record<string, string> = {
  // Synchronous, set and restored around one search of one answer: no two searches see it.
  'model/text-calls/lenient-json.ts repairBudget': 'a work bound for one synchronous search',
  // Pure memos of the same input's same output.
  'model/describe-tool.ts inputSchemas': 'JSON Schema of a tool, by schema object',
  'agents/context-window.ts repeatedCounts': 'token counts of repeated texts',
  'http/optional-body.ts takesEmptyObject': 'whether a route body schema accepts {}, by schema object',
  'tools/sandbox/command-policy/npm-commands.ts spellings': 'npm command table, built on first use',
  'tools/sandbox/command-policy/tree-sitter-reader.ts parserPromise': 'the bash grammar, loaded on first use',
  // Filled once as the module loads, read only afterwards.
  'tools/sandbox/command-policy/programs/find.ts PRIMARIES': "find's primaries",
  // Copies of the host's own files, the same for every service in the process.
  'tools/sandbox/system-view.ts stagedEtc': "the staged copy of the host's /etc",
  'tools/sandbox/user-network.ts stagedResolvConfs': "the sandbox's resolv.conf, made from the host's",
  'util/process-dir.ts own': "the process's own temp directory, where those copies live",
  // A worker thread's own connection, reused by the tasks it runs: not the service's module scope.
  'db/large-text-worker.ts sqlite': "the large text worker's read-only SQLite connection",
  'db/large-text-worker.ts postgres': "the large text worker's PostgreSQL client",
  // One thread shared by every SQLite database's log checkpoints; each task names its file.
  'db/wal-checkpoints.ts pool': 'the thread that checkpoints SQLite logs, started on first use',
  // Source text of the program a sandboxed revert runs in a process of its own, not this module's state.
  'checkpoints/restore-program.ts at': "a variable of the restore program's source",
};
const NOT_SCANNED: string[] = [];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** `<file> <name>` of every top-level `let`, and every top-level Map, Set or WeakMap the module changes after creating it. */
function moduleState(): string[] {
  return sourceFiles(SRC).flatMap((path) => {
    const file = relative(SRC, path);
    if (NOT_SCANNED.includes(file)) return [];
    const text = readFileSync(path, 'utf8');
    const lets = [...text.matchAll(/^(?:export )?let (\w+)/gm)].map((m) => m[1]!);
    const collections = [...text.matchAll(/^(?:export )?const (\w+)(?:: [^=]+)? = new (?:Map|Set|WeakMap)\b/gm)]
      .map((m) => m[1]!)
      .filter((name) => new RegExp(`\\b${name}\\.(?:set|add|delete|clear)\\(`).test(text));
    return [...lets, ...collections].map((name) => `${file} ${name}`);
  });
}

describe('module-scope state', () => {
  it('finds what it looks for (the scan itself works)', () => {
    expect(moduleState()).toContain('agents/context-window.ts repeatedCounts');
  });

  it('holds nothing that decides security: the sandbox probes, toolchains, search backend, repository census and gitlink guard live in the ToolHost', () => {
    expect(moduleState().sort()).toEqual(Object.keys(HARMLESS).sort());
  });

  it('gives each service its own host: one host remembers what it found, another looks for itself', async () => {
    const [first, second] = [createToolHost(), createToolHost()];
    expect(first.searchBackend.get()).toBe(first.searchBackend.get());
    expect(first.sandboxes).not.toBe(second.sandboxes);
    expect(first.repositories).not.toBe(second.repositories);
    expect(first.gitlinks).not.toBe(second.gitlinks);
    const disabled = { sandboxEnabled: false };
    expect(await first.sandboxes.detect(disabled)).toMatchObject({ state: 'disabled' });
    // Probed once per bwrap binary by each host: the second call is the first one's answer.
    const enabled = { sandboxEnabled: true };
    expect(first.sandboxes.detect(enabled)).toBe(first.sandboxes.detect(enabled));
    expect(first.sandboxes.detect(enabled)).not.toBe(second.sandboxes.detect(enabled));
    await Promise.all([first.sandboxes.detect(enabled), second.sandboxes.detect(enabled)]);
  });
});
