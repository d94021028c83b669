import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { pino } from 'pino';
import { parseMcpConfig } from '../packages/api/src/mcp/config.js';
import { McpConnections } from '../packages/api/src/mcp/connections.js';
import { McpToolSource } from '../packages/api/src/mcp/tool-source.js';
import { executeToolCall, type ExecutionContext } from '../packages/api/src/agents/tool-executor.js';
import type { Tool } from '../packages/api/src/tools/tool.js';
import { withDeadline } from '../packages/api/src/util/deadline.js';
import { PathSandbox } from '../packages/api/src/tools/sandbox/paths.js';
import { interleavedMediansMs, result, type Bench, type BenchResult } from './harness.js';
import { host, settings } from './sandbox-support.js';

/** The published server (a devDependency from the npm registry), and the node_modules it needs to read in the sandbox. */
const EVERYTHING = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
const NODE_MODULES = dirname(dirname(dirname(dirname(EVERYTHING))));
const TOOL = 'mcp__everything__echo';
const ARGS = { message: 'hello from the bench' };

const WARM_RUNS = 1001;
const SDK_BASELINE = 'the official SDK Client + StdioClientTransport calling the same tool of the same server, unsandboxed';

/** Both sides start the same binary with the same arguments; only the path between differs. */
const serverArgs = [EVERYTHING, 'stdio'];

interface Mada {
  tool: Tool;
  execution: ExecutionContext;
  close(): Promise<void>;
}

/**
 * mada's side, as a run gets it: the MCP tool source asks the connections for the user's server
 * (started now, inside the sandbox, through the launcher `bash` uses) and hands back the tool the
 * engine calls.
 */
async function startMada(root: string): Promise<Mada> {
  const workspace = new PathSandbox([root]);
  const tools = { ...settings(true), sandboxReadPaths: [NODE_MODULES] };
  const servers = parseMcpConfig(JSON.stringify({ mcpServers: { everything: { command: 'node', args: serverArgs } } }), 'bench mcp.json');
  const connections = new McpConnections({ tools, idleSeconds: 600, startTimeoutSeconds: 60 }, host, pino({ level: 'silent' }));
  const notices: string[] = [];
  const offered = await new McpToolSource(servers, connections, pino({ level: 'silent' })).toolsFor({ owner: 'bench', workspace, access: 'write', notice: (text) => notices.push(text) });
  const tool = offered.find((candidate) => candidate.name === TOOL);
  if (tool === undefined) {
    await connections.closeAll();
    throw new Error(`${TOOL} was not offered: ${notices.join('; ')}`);
  }
  const toolContext = { workingDir: root, sandbox: workspace, settings: tools, host, signal: new AbortController().signal };
  const execution: ExecutionContext = { tools: new Map([[TOOL, tool]]), mode: 'default', toolContext, timeoutSeconds: 60, emit: () => {} };
  return { tool, execution, close: () => connections.closeAll() };
}

/** The MCP tool the source offered, called with a signal of its own as the executor gives each call. */
async function callMcpTool(mada: Mada): Promise<void> {
  const deadline = withDeadline(mada.execution.toolContext.signal, mada.execution.timeoutSeconds * 1000);
  try {
    const outcome = await mada.tool.execute(mada.tool.parameters.parse(ARGS), { ...mada.execution.toolContext, signal: deadline.signal });
    if (!outcome.success || !outcome.data.includes(ARGS.message)) throw new Error(`mada's call failed: ${outcome.success ? outcome.data : outcome.error}`);
  } finally {
    deadline.dispose();
  }
}

/** The call as the run loop makes it: arguments checked, the approval decision, the deadline, the events. */
async function callMada(mada: Mada): Promise<void> {
  const text = await executeToolCall({ id: 'call-1', name: TOOL, arguments: ARGS, rawArguments: JSON.stringify(ARGS) }, mada.execution);
  if (!text.includes(ARGS.message)) throw new Error(`mada's call failed: ${text}`);
}

/** The baseline: the official SDK's client and stdio transport, the server spawned directly, no sandbox. */
async function startSdk(root: string): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1' });
  await client.connect(new StdioClientTransport({ command: 'node', args: serverArgs, cwd: root, stderr: 'ignore' }));
  // mada lists the tools when it connects; the baseline does the same work.
  await client.listTools();
  return client;
}

async function callSdk(client: Client): Promise<void> {
  const outcome = await client.callTool({ name: 'echo', arguments: ARGS });
  if (outcome.isError === true || !JSON.stringify(outcome.content).includes(ARGS.message)) throw new Error('the SDK call failed');
}

const bench: Bench = async () => {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-mcp-')));
  const open: { close(): Promise<unknown> }[] = [];
  try {
    // Cold: a server started for the call (mada: the sandbox, the server, initialize and
    // tools/list; the SDK: the same server spawned bare, initialize and tools/list), then the first
    // call. Each start is stopped before the next; the first turn (unmeasured) also pays the host's
    // one-time probe of bubblewrap, which a service pays once at start.
    const cold = await interleavedMediansMs(
      async () => {
        const client = await startSdk(root);
        await callSdk(client);
        await client.close();
      },
      async () => {
        const mada = await startMada(root);
        await callMada(mada);
        await mada.close();
      },
      7,
      1,
    );
    // Warm: one server each, started once, called in turns.
    const sdk = await startSdk(root);
    open.push(sdk);
    const mada = await startMada(root);
    open.push(mada);
    // A call takes a fraction of a millisecond: many turns, and a long warm-up for the JIT.
    const warm = await interleavedMediansMs(() => callSdk(sdk), () => callMcpTool(mada), WARM_RUNS, 200);
    const executor = await interleavedMediansMs(() => callSdk(sdk), () => callMada(mada), WARM_RUNS, 200);
    const coldResult: BenchResult = {
      name: 'MCP first call to a cold stdio server through mada: sandbox + server start, initialize, tools/list, echo',
      baseline: 'the SDK client spawning the same server bare, the same requests',
      baselineMs: cold.baselineMs,
      subjectMs: cold.subjectMs,
      ratio: cold.subjectMs,
      kind: 'absolute',
      unit: 'ms',
      note: 'once per server and user until MCP_IDLE_SECONDS; reported, no target (median of 7 starts in turns)',
    };
    return [
      result(
        'MCP tool call to a warm stdio server through mada (tool source, connection, sandboxed server)',
        SDK_BASELINE,
        warm.baselineMs,
        warm.subjectMs,
        1.5,
        `the Tool McpToolSource offers for ${TOOL}, called with a deadline signal of its own; not a whole HTTP run (its model steps would dwarf the call); median of ${WARM_RUNS} calls in turns`,
      ),
      result(
        'Same call through the run loop\'s executeToolCall (approval decision, deadline, tool events)',
        SDK_BASELINE,
        executor.baselineMs,
        executor.subjectMs,
        undefined,
        `reported only: the executor's own per-call work, the same for every tool; median of ${WARM_RUNS} calls in turns`,
      ),
      coldResult,
    ];
  } finally {
    await Promise.all(open.map((item) => item.close().catch(() => undefined)));
    rmSync(root, { recursive: true, force: true });
  }
};

export default bench;
