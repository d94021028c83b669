import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import { VERSION } from '../../version.js';
import { registerRunTools, type CallOwner, type RunToolDeps } from './run-tools.js';

/** Sessions of one user at once; the least recently used idle one makes room for a new one. */
export const MAX_SESSIONS_PER_USER = 16;
/** A session unused this long (and with no call running) is closed: clients seldom say goodbye. */
export const SESSION_IDLE_MS = 30 * 60_000;

const INSTRUCTIONS =
  'mada runs coding agents in a sandbox on its own models. Hand it work with explore (questions about a codebase), ' +
  "plan (an implementation plan) or task (changes): each call is a run in your workspace there, and answers with the agent's final text.";

export interface McpSession extends CallOwner {
  transport: WebStandardStreamableHTTPServerTransport;
  server: McpServer;
  lastUsed: number;
  /** HTTP requests of the session being answered now (a tool call's stream among them). */
  open: number;
}

/**
 * The MCP sessions of this process. A session is what lets a tool call's run ask the client a
 * question (elicitation) and hear its answer, which comes back as another POST: the two must meet
 * the same server. Sessions live in memory: behind replicas, a client must keep reaching the one
 * it started on (sticky routing); elsewhere it gets 404 and starts a new session, as MCP says.
 */
export class McpSessions {
  private readonly sessions = new Map<string, McpSession>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly deps: RunToolDeps,
    private readonly now: () => number = Date.now,
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(SESSION_IDLE_MS, 60_000));
    this.sweeper.unref();
  }

  /** The caller's session with this id; another user's is not told apart from an unknown one. */
  find(id: string, userId: string): McpSession | undefined {
    const session = this.sessions.get(id);
    if (session === undefined || session.userId !== userId) return undefined;
    session.lastUsed = this.now();
    return session;
  }

  /**
   * A session for an `initialize` request, kept once its transport gives it an id; undefined when
   * the user's sessions are all busy with calls.
   */
  async create(userId: string): Promise<McpSession | undefined> {
    if (!this.makeRoom(userId)) return undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: randomUUID,
      onsessioninitialized: (id) => {
        this.sessions.set(id, session);
      },
    });
    const server = new McpServer({ name: 'mada', version: VERSION }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
    const session: McpSession = { userId, transport, server, inflight: new Map<RequestId, () => void>(), lastUsed: this.now(), open: 0 };
    registerRunTools(server, session, this.deps);
    server.server.onclose = () => {
      if (transport.sessionId !== undefined && this.sessions.get(transport.sessionId) === session) this.sessions.delete(transport.sessionId);
    };
    await server.connect(transport);
    return session;
  }

  /** Ends a session: its calls' runs are cancelled (their handlers see the abort). */
  async close(session: McpSession): Promise<void> {
    for (const cancel of session.inflight.values()) cancel();
    await session.server.close();
  }

  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    await Promise.allSettled([...this.sessions.values()].map((session) => this.close(session)));
    this.sessions.clear();
  }

  get size(): number {
    return this.sessions.size;
  }

  private idle(session: McpSession): boolean {
    return session.open === 0 && session.inflight.size === 0;
  }

  /** Below the user's cap, closing their least recently used idle session if need be. */
  private makeRoom(userId: string): boolean {
    const mine = [...this.sessions.values()].filter((session) => session.userId === userId);
    if (mine.length < MAX_SESSIONS_PER_USER) return true;
    const oldest = mine.filter((session) => this.idle(session)).sort((a, b) => a.lastUsed - b.lastUsed)[0];
    if (oldest === undefined) return false;
    void this.close(oldest);
    return true;
  }

  private sweep(): void {
    const before = this.now() - SESSION_IDLE_MS;
    for (const session of this.sessions.values()) if (this.idle(session) && session.lastUsed < before) void this.close(session);
  }
}
