import { readFileSync } from 'node:fs';
import { UserId } from '@mada/protocol';
import { z } from 'zod';
import { compileNameGlob } from '../util/name-glob.js';
import type { GlobMatcher } from '../util/glob-automaton.js';
import { firstDuplicateKey } from './duplicate-keys.js';

/** What the model may call a tool: `mcp__<server>__<tool>` must match this (TEAMS.md section 12). */
export const MODEL_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;
export const MCP_PREFIX = 'mcp__';
/** The longest server name that still leaves room for a one-character tool name. */
const MAX_SERVER_NAME = 64 - MCP_PREFIX.length - 2 - 1;

const Globs = z.array(z.string().min(1).max(256)).max(256);
/** mada's own keys, beside the ecosystem's: who may use the server, and which of its tools. */
const MadaKeys = {
  users: z.union([z.literal('all'), z.array(UserId).max(10_000)]).default('all'),
  tools: z.strictObject({ allow: Globs.optional(), deny: Globs.optional() }).optional(),
};
/** Other keys a published snippet carries (`disabled`, `timeout`, a client's own) are ignored. */
const StdioEntry = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  ...MadaKeys,
});
const HttpEntry = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'expected an http or https URL' }),
  headers: z.record(z.string(), z.string()).default({}),
  ...MadaKeys,
});
const ConfigFile = z.object({ mcpServers: z.record(z.string(), z.unknown()) });

interface Common {
  name: string;
  users: 'all' | readonly string[];
  /** Whether the server's tool of this name is offered at all (`tools.allow`, `tools.deny`). */
  offers(toolName: string): boolean;
}
export type StdioServerConfig = Common & { kind: 'stdio'; command: string; args: readonly string[]; env: Readonly<Record<string, string>> };
export type HttpServerConfig = Common & { kind: 'http'; url: string; headers: Readonly<Record<string, string>> };
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

/** A config file the service must not start with; the message is one line naming the file and what is wrong. */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

/** Reads MCP_CONFIG_FILE; throws McpConfigError. */
export function readMcpConfig(path: string): McpServerConfig[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new McpConfigError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  return parseMcpConfig(text, path);
}

export function parseMcpConfig(text: string, path: string): McpServerConfig[] {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new McpConfigError(`${path} is not valid JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  const file = ConfigFile.safeParse(document);
  if (!file.success) throw new McpConfigError(`${path} must hold {"mcpServers": {"<name>": {...}}}`);
  const duplicate = firstDuplicateKey(text);
  if (duplicate !== undefined) {
    const where = duplicate.path.length === 0 ? '' : ` in ${duplicate.path.join('.')}`;
    const what = duplicate.path.length === 1 && duplicate.path[0] === 'mcpServers' ? `server "${duplicate.key}" is named twice` : `key "${duplicate.key}" appears twice${where}`;
    throw new McpConfigError(`${path}: ${what}`);
  }
  return Object.entries(file.data.mcpServers).map(([name, entry]) => serverOf(name, entry, path));
}

function serverOf(name: string, entry: unknown, path: string): McpServerConfig {
  const quoted = JSON.stringify(name.slice(0, 80));
  if (!/^[A-Za-z0-9_-]+$/.test(name) || name.length > MAX_SERVER_NAME) {
    throw new McpConfigError(`${path}: server ${quoted} cannot make tool names mcp__<server>__<tool>: a server name is 1 to ${MAX_SERVER_NAME} letters, digits, "_" or "-"`);
  }
  // Otherwise mcp__<server>__<tool> reads two ways: server "gh" could list a tool "ent__wipe" and
  // get the calls, and the approval rules (`mcp__gh__ent__*`), meant for server "gh__ent".
  if (name.includes('__') || name.endsWith('_')) {
    throw new McpConfigError(`${path}: server ${quoted}: a server name may not hold "__" nor end in "_": its tools' names would read as another server's`);
  }
  const raw = entry !== null && typeof entry === 'object' && !Array.isArray(entry) ? (entry as Record<string, unknown>) : undefined;
  if (raw === undefined) throw new McpConfigError(`${path}: server ${quoted} must be an object`);
  if (raw.type === 'sse') throw new McpConfigError(`${path}: server ${quoted}: the old SSE transport is not supported; use the server's Streamable HTTP endpoint ("type": "http")`);
  const stdio = raw.command !== undefined || raw.type === 'stdio';
  const parsed = (stdio ? StdioEntry : HttpEntry).safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new McpConfigError(`${path}: server ${quoted}: ${issue.path.join('.') || 'entry'}: ${issue.message}`);
  }
  const { users, tools } = parsed.data;
  const common = { name, users, offers: toolFilter(tools, `${path}: server ${quoted}`) };
  if ('command' in parsed.data) return { ...common, kind: 'stdio', command: parsed.data.command, args: parsed.data.args, env: parsed.data.env };
  const http = parsed.data as z.output<typeof HttpEntry>;
  return { ...common, kind: 'http', url: http.url, headers: http.headers };
}

function toolFilter(tools: { allow?: string[] | undefined; deny?: string[] | undefined } | undefined, where: string): (name: string) => boolean {
  const compile = (globs: string[] | undefined): GlobMatcher[] | undefined => {
    try {
      return globs?.map(compileNameGlob);
    } catch (error) {
      throw new McpConfigError(`${where}: tools: ${(error as Error).message}`);
    }
  };
  const allow = compile(tools?.allow);
  const deny = compile(tools?.deny) ?? [];
  return (name) => (allow === undefined || allow.some((glob) => glob.test(name))) && !deny.some((glob) => glob.test(name));
}

/** Whether `user` may use the server. */
export const servesUser = (server: McpServerConfig, user: string): boolean => server.users === 'all' || server.users.includes(user);
