import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = fileURLToPath(new URL('../src/', import.meta.url));

/** The folders of run-level services, which the layers below the runs never import. */
const SERVICES = ['approvals', 'checkpoints', 'metrics', 'webhooks'];

/** Top-level folders of src/ that a folder must never import: dependencies point one way. */
const FORBIDDEN: Record<string, string[]> = {
  tools: ['agents', 'conversations', 'runs', 'http', ...SERVICES],
  agents: ['conversations', 'runs', 'http', ...SERVICES],
  conversations: ['agents', 'runs', 'http', ...SERVICES],
  model: ['agents', 'conversations', 'tools', 'runs', 'http', ...SERVICES],
  db: ['agents', 'conversations', 'tools', 'runs', 'http', ...SERVICES],
  runs: ['http', 'approvals', 'metrics', 'webhooks'],
  // A run's snapshots: beside the tools, below the runs that take them.
  checkpoints: ['agents', 'conversations', 'runs', 'http', 'approvals', 'metrics'],
  // Asks and answers for a run's tool calls: above the runs they pause.
  approvals: ['conversations', 'http', 'checkpoints', 'metrics', 'webhooks'],
  // Counts what the engine, the model client, the tools and the runs do; never the other way.
  metrics: ['conversations', 'db', 'http', 'approvals', 'checkpoints'],
  tokens: ['agents', 'conversations', 'tools', 'model', 'db', 'runs', 'http', ...SERVICES],
  // The MCP client: beside the tools it adapts, below the agents that ask it for a user's tools.
  mcp: ['agents', 'conversations', 'runs', 'http', ...SERVICES],
  // Users and keys: below the routes that serve them.
  users: ['http', 'agents', 'tools', 'checkpoints', 'approvals'],
  // Users' webhooks and their sender: an event's deliveries are written by the database with the change that causes it.
  webhooks: ['agents', 'conversations', 'tools', 'model', 'runs', 'http', 'mcp', 'approvals', 'checkpoints', 'metrics'],
  util: ['agents', 'conversations', 'tools', 'model', 'db', 'runs', 'http', ...SERVICES],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** The src/ folder a file lives in (`app.ts` at the top lives in `.`). */
const layerOf = (path: string): string => {
  const parts = relative(SRC, path).split(sep);
  return parts.length > 1 ? parts[0]! : '.';
};

/** `<importing file> -> <imported file>` for every relative import that crosses a forbidden line. */
function violations(): string[] {
  return sourceFiles(SRC).flatMap((file) => {
    const banned = FORBIDDEN[layerOf(file)] ?? [];
    const specifiers = [...readFileSync(file, 'utf8').matchAll(/\bfrom\s+'(\.{1,2}\/[^']+)'/g)].map((match) => match[1]!);
    return specifiers
      .map((specifier) => resolve(dirname(file), specifier))
      .filter((target) => banned.includes(layerOf(target)))
      .map((target) => `${relative(SRC, file)} -> ${relative(SRC, target)}`);
  });
}

describe('module layering', () => {
  it('finds the imports it checks (the scan itself works)', () => {
    expect(sourceFiles(SRC).some((file) => file.endsWith(join('tools', 'spawn-agent.ts')))).toBe(true);
    expect(layerOf(join(SRC, 'agents', 'engine.ts'))).toBe('agents');
    for (const layer of SERVICES) expect(sourceFiles(join(SRC, layer)).length).toBeGreaterThan(0);
  });

  it('never imports upwards: tools know no agents, the agent loop knows no conversations', () => {
    expect(violations()).toEqual([]);
  });
});
