import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { ScriptedModel } from '@mada/testkit';
import { expect } from 'vitest';
import type { TestApp } from '../support/app.js';
import { readRunEvents } from '../support/run-events.js';
import { until } from '../support/until.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

const require = createRequire(import.meta.url);

/** The published servers' entry points, installed from the npm registry as devDependencies. */
export const EVERYTHING = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
export const FILESYSTEM = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');
/** The node_modules that holds them and their dependencies: shown read-only to the sandbox (SANDBOX_READ_PATHS). */
export const NODE_MODULES = dirname(dirname(dirname(dirname(EVERYTHING))));
/** The SDK's stdio server pieces, for hostile servers written in the tests. */
export const SDK_TYPES = require.resolve('@modelcontextprotocol/sdk/types.js');

export type Json = Record<string, unknown>;
const ENDED = new Set(['succeeded', 'failed', 'cancelled', 'interrupted']);

/** A fresh directory outside every workspace (and so outside the sandbox's view, unless listed). */
export const outsideDir = (prefix: string): string => tempDir(prefix);

/** Writes an MCP_CONFIG_FILE in a directory of its own; returns its path. */
export function writeConfig(servers: Record<string, unknown>): string {
  const path = join(outsideDir('mada-mcp-config-'), 'mcp.json');
  writeFileSync(path, JSON.stringify({ mcpServers: servers }));
  return path;
}

/** Starts a run over real HTTP, waits for its end, and returns it with its events. */
export async function runToEnd(address: string, body: Json, headers: Record<string, string> = {}): Promise<{ run: Json; events: Json[] }> {
  const response = await fetch(`${address}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ agent_type: 'task', prompt: 'go', working_dir: '.', ...body }),
  });
  expect(response.status).toBe(202);
  const { id } = (await response.json()) as { id: string };
  const run = await until(
    async () => (await (await fetch(`${address}/runs/${id}`, { headers })).json()) as Json,
    (value) => ENDED.has(value.status as string),
    `run ${id} to end`,
  );
  const events = (await readRunEvents(address, id, { headers })).frames.map((frame) => JSON.parse(frame.data) as Json);
  return { run, events };
}

/** What the model read as the result of the tool call before request `index`. */
export const toolResultBefore = (model: ScriptedModel, index: number): string | undefined =>
  model.requests[index]?.messages.filter((message) => message.role === 'tool').at(-1)?.content;

export const thinkingTexts = (events: Json[]): string[] => events.filter((event) => event.event === 'thinking').map((event) => String(event.message));

export type { TestApp };
