import { z } from 'zod';
import { fail, succeed, type Tool, type ToolSource, type ToolSourceRequest } from '../tools/tool.js';
import { errorMessage } from '../util/error-message.js';
import type { Log } from '../util/log.js';
import { MCP_PREFIX, MODEL_TOOL_NAME, servesUser, type McpServerConfig } from './config.js';
import type { Connection, McpConnections } from './connections.js';
import { modelSchema } from './model-schema.js';
import { resultText } from './tool-result.js';

/** A tool's description as the model reads it; a longer one is cut (it costs every request of the run). */
const MAX_DESCRIPTION_CHARS = 2000;

/** The server validates its own arguments against its schema; the service only asks for an object. */
const ANY_OBJECT = z.record(z.string(), z.unknown());

/**
 * The run owner's MCP tools, as the engine asks for them at the start of each run: every server
 * the config gives this user, connected (or started) now with the run's access to the workspace
 * (read-only for a run that may not change files), its tools named `mcp__<server>__<tool>`.
 * What cannot be offered is left out and said in a `notice` (the run's `thinking` event): a server
 * that is down, a tool whose name or schema the model cannot take, two tools of one name.
 */
export class McpToolSource implements ToolSource {
  constructor(
    private readonly servers: readonly McpServerConfig[],
    private readonly connections: McpConnections,
    private readonly log: Log,
  ) {}

  async toolsFor(request: ToolSourceRequest): Promise<Tool[]> {
    const mine = this.servers.filter((server) => servesUser(server, request.owner));
    if (mine.length === 0) return [];
    const connected = await Promise.all(mine.map((server) => this.connect(server, request)));
    const tools = new Map<string, Tool>();
    const collided = new Set<string>();
    for (const connection of connected) {
      if (connection === undefined) continue;
      for (const tool of this.toolsOf(connection, request.notice)) {
        if (tools.has(tool.name) || collided.has(tool.name)) {
          tools.delete(tool.name);
          collided.add(tool.name);
          continue;
        }
        tools.set(tool.name, tool);
      }
    }
    for (const name of collided) request.notice(`MCP tool ${name} is left out: two tools have that name`);
    return [...tools.values()];
  }

  private async connect(server: McpServerConfig, { owner, workspace, access, notice }: ToolSourceRequest): Promise<Connection | undefined> {
    try {
      const connection = await this.connections.connection(server, owner, workspace, access);
      const skipped = connection.skippedLines();
      if (skipped > 0) notice(`MCP server "${server.name}" wrote ${skipped} line(s) on stdout that are not MCP messages; they were ignored`);
      return connection;
    } catch (error) {
      notice(`MCP server "${server.name}" is unavailable, so its tools are left out: ${errorMessage(error)}`);
      return undefined;
    }
  }

  private toolsOf(connection: Connection, notice: (text: string) => void): Tool[] {
    const { server } = connection;
    const seen = new Set<string>();
    const tools: Tool[] = [];
    for (const listed of connection.tools) {
      if (!server.offers(listed.name)) continue;
      const name = `${MCP_PREFIX}${server.name}__${listed.name}`;
      const shown = JSON.stringify(listed.name.slice(0, 80));
      if (!MODEL_TOOL_NAME.test(name)) {
        notice(`MCP tool ${shown} of server "${server.name}" is left out: ${name.length > 64 ? 'its name is too long' : 'its name has characters a model tool name cannot have'}`);
        continue;
      }
      if (seen.has(listed.name)) continue;
      seen.add(listed.name);
      const converted = modelSchema(listed.inputSchema);
      if ('problem' in converted) {
        notice(`MCP tool ${name} is left out: ${converted.problem}`);
        this.log.warn({ mcp_server: server.name, tool: listed.name, reason: converted.problem }, 'MCP tool left out');
        continue;
      }
      tools.push(this.tool(connection, listed.name, name, listed.description ?? listed.title ?? '', converted.schema, listed.annotations?.readOnlyHint === true));
    }
    return tools;
  }

  private tool(connection: Connection, serverName: string, name: string, description: string, schema: Record<string, unknown>, readOnly: boolean): Tool<typeof ANY_OBJECT> {
    const connections = this.connections;
    return {
      name,
      description: description.slice(0, MAX_DESCRIPTION_CHARS),
      parameters: ANY_OBJECT,
      inputSchema: schema,
      readOnly,
      // A stdio server works in the user's workspace: a call that may write is checkpointed first.
      modifiesFiles: !readOnly && connection.server.kind === 'stdio',
      ...(readOnly ? {} : { asksUnlessAllowed: `${name} is not marked read-only by its MCP server` }),
      startArgs: (params) => params,
      async execute(params, context) {
        try {
          const result = await connections.call(connection, serverName, params, context.signal);
          const text = resultText(result);
          return result.isError === true ? fail(text === '' ? `${name} failed` : text) : succeed(text);
        } catch (error) {
          return fail(`Error: MCP server "${connection.server.name}": ${errorMessage(error)}`);
        }
      },
    };
  }
}
