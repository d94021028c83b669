import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolResultSchema, ListToolsResultSchema, type CallToolResult, type Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import type { PathSandbox } from '../tools/sandbox/paths.js';
import type { SandboxMode } from '../tools/sandbox/tool-sandbox.js';
import type { ToolSettings } from '../tools/tool.js';
import type { ToolHost } from '../tools/tool-host.js';
import { cutText } from '../tools/text.js';
import { errorMessage } from '../util/error-message.js';
import type { Log } from '../util/log.js';
import { VERSION } from '../version.js';
import type { McpServerConfig } from './config.js';
import { httpTransport } from './http-transport.js';
import { LineTransport } from './line-transport.js';
import { startServerProcess } from './server-process.js';

/** One JSON-RPC message (or HTTP response) from a server may be at most this big. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;
/** What of a server's error text reaches a run (its events, the model) and the logs. */
export const MAX_REASON_CHARS = 2000;
/** Listing stops here: a server offering thousands of tools would fill any window anyway. */
const MAX_TOOL_PAGES = 10;
const MAX_TOOLS = 512;
/** Restarts after a crash wait 1 s, 2 s, 4 s ... at most this long. */
const MAX_BACKOFF_MS = 60_000;
/** A connection that lived this long before it died starts its backoff over. */
const STABLE_MS = 60_000;

export interface McpSettings {
  tools: ToolSettings;
  idleSeconds: number;
  startTimeoutSeconds: number;
}

/** A live connection to one server for one user, and the tools it listed. */
export interface Connection {
  server: McpServerConfig;
  tools: readonly McpTool[];
  /** Lines of stdout that were not JSON-RPC (a server logging there), for the warning. */
  skippedLines(): number;
}

interface Live extends Connection {
  key: string;
  /** The user and server, whatever the access: where a failure's backoff is kept. */
  failureKey: string;
  client: Client;
  transport: Transport;
  roots: string;
  startedAt: number;
  busy: number;
  closing: boolean;
  idle: NodeJS.Timeout | undefined;
  reason(): string | undefined;
}

interface Failure {
  count: number;
  retryAt: number;
  reason: string;
}

/**
 * One connection per server and user (TEAMS.md section 12): started on the user's first run that
 * needs it, shared by the user's runs, closed after MCP_IDLE_SECONDS unused and at shutdown. A
 * server that crashed or failed to start is tried again on a later use, no sooner than its backoff
 * allows; until then it costs its runs only its tools. Secrets in a server's `env` and `headers`
 * go to the server and nowhere else: errors are passed through `redact` before anyone sees them.
 */
export class McpConnections {
  private readonly live = new Map<string, Promise<Live>>();
  private readonly failures = new Map<string, Failure>();
  private closed = false;

  constructor(
    private readonly settings: McpSettings,
    private readonly host: ToolHost,
    private readonly log: Log,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The user's connection to `server` with `access` to the workspace, started if needed; throws with
   * a reason fit for the run's events. A stdio server has one process per access: a run that may not
   * change files talks to one that sees the workspace read-only, so neither a tool that lies about
   * being read-only nor the server acting on its own changes a file. A remote server has one
   * connection, as the workspace is not its to see.
   */
  async connection(server: McpServerConfig, user: string, workspace: PathSandbox, access: SandboxMode): Promise<Connection> {
    const failureKey = `${user}\0${server.name}`;
    const key = server.kind === 'stdio' ? `${failureKey}\0${access}` : failureKey;
    const roots = workspace.roots.join('\0');
    const existing = this.live.get(key);
    if (existing !== undefined) {
      const live = await existing.catch(() => undefined);
      // A workspace an admin changed since: the server's view must change with it.
      if (live !== undefined && !live.closing && live.roots === roots) return this.touch(live);
      if (live !== undefined && live.roots !== roots) await this.stop(live);
    }
    if (this.closed) throw new Error('the service is shutting down');
    // One backoff for both processes of a server: what crashed one (its program, its config) most likely crashes the other.
    const failure = this.failures.get(failureKey);
    if (failure !== undefined && failure.retryAt > this.now()) {
      throw new Error(`${failure.reason}; it is tried again in ${Math.ceil((failure.retryAt - this.now()) / 1000)} s`);
    }
    const starting = this.start({ key, failureKey }, server, user, workspace, roots, access);
    this.live.set(key, starting);
    try {
      return this.touch(await starting);
    } catch (error) {
      if (this.live.get(key) === starting) this.live.delete(key);
      const reason = redact(server, errorMessage(error));
      this.fail(failureKey, 0, `it failed to start: ${reason}`);
      throw new Error(`it failed to start: ${reason}`);
    }
  }

  /** Calls a tool of `connection`'s server; the server's own error text on failure. */
  async call(connection: Connection, name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<CallToolResult> {
    const live = connection as Live;
    live.busy++;
    this.touch(live);
    try {
      return await live.client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema, {
        signal,
        // The run's tool deadline aborts `signal`; this only keeps the SDK's own 60 s default away.
        timeout: Math.max(1, this.settings.tools.toolTimeoutSeconds) * 1000 + 1000,
      });
    } catch (error) {
      throw new Error(redact(live.server, live.reason() ?? errorMessage(error)));
    } finally {
      live.busy--;
      this.touch(live);
    }
  }

  /** Stops every server (shutdown): nothing the servers started outlives the service. */
  async closeAll(): Promise<void> {
    this.closed = true;
    const all = await Promise.all([...this.live.values()].map((promise) => promise.catch(() => undefined)));
    this.live.clear();
    await Promise.all(all.map((live) => (live === undefined ? undefined : this.stop(live))));
  }

  private async start({ key, failureKey }: Pick<Live, 'key' | 'failureKey'>, server: McpServerConfig, user: string, workspace: PathSandbox, roots: string, access: SandboxMode): Promise<Live> {
    const timeoutMs = this.settings.startTimeoutSeconds * 1000;
    let transport: Transport;
    let reason: () => string | undefined = () => undefined;
    let skipped = (): number => 0;
    if (server.kind === 'stdio') {
      const process = await startServerProcess(server, workspace, this.settings.tools, this.host, access);
      const lines = new LineTransport(process, MAX_MESSAGE_BYTES);
      transport = lines;
      reason = () => lines.closeReason;
      skipped = () => lines.skippedLines;
    } else {
      const remote = httpTransport(server, MAX_MESSAGE_BYTES);
      transport = remote.transport;
      reason = remote.closeReason;
    }
    const client = new Client({ name: 'mada', version: VERSION }, { capabilities: {} });
    // Errors the SDK reports on the side (a stream that broke) are logged, redacted, never thrown.
    client.onerror = (error) => this.log.debug({ mcp_server: server.name, reason: redact(server, errorMessage(error)) }, 'MCP connection error');
    const live: Live = {
      key, failureKey, server, client, transport, roots, tools: [], startedAt: this.now(), busy: 0, closing: false, idle: undefined,
      reason, skippedLines: skipped,
    };
    client.onclose = () => this.closedByServer(live);
    const deadline = setTimeout(() => void transport.close(), timeoutMs + 1000);
    try {
      await client.connect(transport, { timeout: timeoutMs });
      live.tools = await this.listTools(client, timeoutMs);
    } catch (error) {
      live.closing = true;
      // Read before closing, which gives every connection the reason "the service closed it".
      const why = reason() ?? timeoutText(error, timeoutMs) ?? errorMessage(error);
      await transport.close().catch(() => undefined);
      throw new Error(why);
    } finally {
      clearTimeout(deadline);
    }
    this.log.info({ mcp_server: server.name, user, access, tools: live.tools.length }, 'MCP server connected');
    return live;
  }

  private async listTools(client: Client, timeoutMs: number): Promise<McpTool[]> {
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES && tools.length < MAX_TOOLS; page++) {
      const result = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ListToolsResultSchema, { timeout: timeoutMs });
      tools.push(...result.tools.slice(0, MAX_TOOLS - tools.length));
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return tools;
  }

  private touch(live: Live): Live {
    if (live.idle !== undefined) clearTimeout(live.idle);
    live.idle = undefined;
    if (live.busy === 0 && !live.closing) {
      live.idle = setTimeout(() => {
        this.log.info({ mcp_server: live.server.name }, 'MCP server stopped after MCP_IDLE_SECONDS unused');
        void this.stop(live);
      }, this.settings.idleSeconds * 1000);
      live.idle.unref();
    }
    return live;
  }

  private async stop(live: Live): Promise<void> {
    if (live.idle !== undefined) clearTimeout(live.idle);
    live.closing = true;
    if (this.live.get(live.key) !== undefined) {
      const current = await this.live.get(live.key)?.catch(() => undefined);
      if (current === live) this.live.delete(live.key);
    }
    await live.transport.close().catch(() => undefined);
  }

  /** The server went away on its own (a crash, a broken protocol): its next start waits its backoff. */
  private closedByServer(live: Live): void {
    if (live.closing) return;
    live.closing = true;
    if (live.idle !== undefined) clearTimeout(live.idle);
    this.live.delete(live.key);
    const reason = redact(live.server, live.reason() ?? 'the connection closed');
    this.log.warn({ mcp_server: live.server.name, reason }, 'MCP server connection ended');
    this.fail(live.failureKey, this.now() - live.startedAt, `it stopped: ${reason}`);
  }

  private fail(key: string, uptimeMs: number, reason: string): void {
    const before = this.failures.get(key);
    const count = before === undefined || uptimeMs >= STABLE_MS ? 1 : before.count + 1;
    const backoff = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (count - 1));
    this.failures.set(key, { count, retryAt: this.now() + backoff, reason });
  }
}

function timeoutText(error: unknown, timeoutMs: number): string | undefined {
  return /timed out|timeout/i.test(errorMessage(error)) ? `it did not answer within ${timeoutMs / 1000} s` : undefined;
}

/**
 * `text` with every value of the server's `env` and `headers` (four characters or more) replaced,
 * as its events and logs may show it: the server's own words (an error message it answered with)
 * are cut to MAX_REASON_CHARS and their control characters replaced, so a hostile server puts
 * neither a megabyte into every run's events nor terminal escapes into anyone's terminal.
 */
export function redact(server: McpServerConfig, text: string): string {
  const secrets = Object.values(server.kind === 'stdio' ? server.env : server.headers).filter((value) => value.length >= 4);
  let out = text;
  for (const secret of secrets) out = out.split(secret).join('[redacted]');
  // eslint-disable-next-line no-control-regex
  const { text: kept, cut } = cutText(out.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '\ufffd'), MAX_REASON_CHARS);
  return cut ? `${kept} [cut at ${MAX_REASON_CHARS} characters]` : kept;
}
