import { randomUUID } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { AgentRunRequest, AgentRunResponse } from '../packages/protocol/src/index.js';
import { scripted, startScriptedModel, type ScriptedModel } from '../packages/testkit/src/index.js';
import { createTestApp, type TestApp } from '../packages/api/test/support/app.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../packages/api/test/support/databases.js';
import { followRunEventsOver } from '../packages/api/test/support/run-events.js';
import { startService, type ServiceProcess } from '../packages/api/test/support/service-process.js';
import { AuthFailureLimiter } from '../packages/api/src/http/auth-failures.js';
import { Authenticator, requireCaller } from '../packages/api/src/http/auth.js';
import { CredentialFailures } from '../packages/api/src/http/credential-failures.js';
import { abortOnClientGone } from '../packages/api/src/http/client-gone.js';
import { assertMessageFits } from '../packages/api/src/http/message-limit.js';
import { interleavedMediansMs, overhead, result, type Bench, type BenchResult } from './harness.js';

const REPLAY_EVENTS = Number(process.env.BENCH_REPLAY_EVENTS ?? 10_000);
const LATENCY_SAMPLES = 60;
const TOOL_STEPS = 3;

const json = { 'content-type': 'application/json' };

/** Reads a whole SSE response body over real HTTP; the text length proves both sides sent it all. */
async function readBody(url: string): Promise<number> {
  const response = await fetch(url, { headers: { accept: 'text/event-stream' } });
  return (await response.text()).length;
}

/** Writes frames from memory the way the run event stream does: in groups of about 64 KiB, waiting for drain. */
function memoryStream(frames: readonly string[]): Promise<{ server: Server; url: string }> {
  const groups: string[] = [];
  let group = '';
  for (const frame of frames) {
    group += frame;
    if (group.length < 64 * 1024) continue;
    groups.push(group);
    group = '';
  }
  if (group) groups.push(group);
  const send = async (response: ServerResponse): Promise<void> => {
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
    for (const text of groups) {
      if (!response.write(text)) await new Promise((resolve) => response.once('drain', resolve));
    }
    response.end();
  };
  // A client gone mid-stream only ends this baseline's response.
  const server = createServer((_request, response) => void send(response).catch(() => response.destroy()));
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    resolve({ server, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/` });
  }));
}

/** Stores a finished run of REPLAY_EVENTS events (streamed chunks, then `done`) as the run service does, one at a time. */
async function storedRun(t: TestApp): Promise<string> {
  const store = t.database.repository.runs;
  const id = randomUUID();
  const now = new Date();
  await store.createRun(
    { id, userId: 'local', agentType: 'plan', mode: 'default', prompt: 'long answer', workingDir: t.workdir, conversationId: null, status: 'running', now, idempotencyKey: null, requestHash: null, leaseOwner: null, leaseUntil: null },
    { idempotentSince: now },
  );
  for (let i = 1; i < REPLAY_EVENTS; i++) await store.appendActiveEvent(id, `{"event":"chunk","data":"token${i} "}`, now);
  await store.endRun(id, '{"event":"done","mode":"default"}', now, { status: 'succeeded', response: 'long answer', error: null }, { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 });
  return id;
}

/** A finished run of 10,000 stored events (9,999 streamed chunks and `done`), replayed over SSE. */
async function replay(model: ScriptedModel): Promise<BenchResult> {
  const t = await createTestApp({ model: { url: model.url }, env: { RATE_LIMIT_PER_MINUTE: '0' } });
  let memory: { server: Server; url: string } | undefined;
  try {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const id = await storedRun(t);
    const body = await (await fetch(`${address}/runs/${id}/events`)).text();
    memory = await memoryStream(body.split(/(?<=\n\n)/));
    const replayUrl = `${address}/runs/${id}/events`;
    if ((await readBody(memory.url)) !== body.length || (await readBody(replayUrl)) !== body.length) throw new Error('replay and memory streams differ');
    const memoryUrl = memory.url;
    const { baselineMs, subjectMs } = await interleavedMediansMs(() => readBody(memoryUrl), () => readBody(replayUrl), 61, 5);
    return result(`replay of a finished ${REPLAY_EVENTS.toLocaleString('en')}-event run over SSE (SQLite)`, 'the same frames written from memory', baselineMs, subjectMs, 1.5);
  } finally {
    memory?.server.close();
    await t.close();
  }
}

/**
 * Milliseconds from the model releasing each chunk of a run executing on replica A to its frame
 * arriving at a follower on A and at a follower on replica B (two service processes, one database).
 */
async function crossReplica(model: ScriptedModel): Promise<BenchResult | undefined> {
  if (!TEST_DATABASE_URL) return undefined;
  const database = await createTestDatabase('postgres');
  const workdir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-replicas-')));
  const services: ServiceProcess[] = [];
  try {
    const env = { DATABASE_URL: database.url, LLM_BASE_URL: model.url, ALLOWED_PATHS: workdir, RATE_LIMIT_PER_MINUTE: '0' };
    services.push(...(await Promise.all([startService(env, workdir), startService(env, workdir)])));
    const [a, b] = services as [ServiceProcess, ServiceProcess];
    const gates = Array.from({ length: LATENCY_SAMPLES }, () => deferred());
    model.push(scripted.chunks(...gates.flatMap((gate, i) => [scripted.until(gate.promise), `c${i} `])));
    const started = await fetch(`${a.url}/runs`, { method: 'POST', headers: json, body: JSON.stringify({ agent_type: 'plan', prompt: 'stream' }) });
    const { id } = (await started.json()) as { id: string };

    const arrivals = { a: gates.map(() => deferred()), b: gates.map(() => deferred()) };
    const times = { a: [] as number[], b: [] as number[] };
    const follow = (on: ServiceProcess, side: 'a' | 'b') =>
      followRunEventsOver(on.url, id, (frame) => {
        const match = /^\{"event":"chunk","data":"c(\d+) "\}$/.exec(frame.data);
        if (match) arrivals[side][Number(match[1])]!.resolve(performance.now());
      });
    const followers = Promise.all([follow(a, 'a'), follow(b, 'b')]);
    // Both followers are subscribed once they have seen the first chunk; it is not measured.
    for (const [i, gate] of gates.entries()) {
      const released = performance.now();
      gate.resolve(released);
      const [atA, atB] = await Promise.all([arrivals.a[i]!.promise, arrivals.b[i]!.promise]);
      if (i >= 5) {
        times.a.push(atA - released);
        times.b.push(atB - released);
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await followers;
    const aMs = median(times.a);
    const bMs = median(times.b);
    return overhead(
      'event latency to a follower on replica B (two service processes, PostgreSQL LISTEN/NOTIFY)',
      'the same follower on replica A',
      aMs,
      bMs,
      1,
      50,
      `median of ${times.b.length} events from the model's chunk to the follower's frame; 95th percentile on B ${percentile(times.b, 0.95).toFixed(1)} ms`,
    );
  } finally {
    for (const service of services) {
      service.child.kill('SIGKILL');
      await service.exited;
    }
    await database.drop();
  }
}

/**
 * The legacy blocking route as it was before runs were stored, registered on the service's own app
 * (its hooks: caller, host guard, metrics, body validation, error handling) under another path: the
 * same request with recording switched off. Nothing is stored; a client that goes away aborts it.
 */
async function unrecordedRoute(t: TestApp): Promise<void> {
  await t.app.register(async (scope) => {
    requireCaller(scope, new Authenticator(t.settings.apiKeys, t.users), new CredentialFailures(new AuthFailureLimiter()));
    scope.withTypeProvider<ZodTypeProvider>().post(
      '/unrecorded/agents/run',
      { schema: { body: AgentRunRequest, response: { 200: AgentRunResponse } } },
      async (request, reply) => {
        const { agent_type, prompt, working_dir, mode } = request.body;
        await assertMessageFits(prompt, { tokens: t.settings.maxMessageTokens, bytes: t.settings.maxMessageBytes });
        t.engine.agent(agent_type);
        const workingDir = t.engine.workingDirectory(working_dir);
        const signal = abortOnClientGone(reply);
        const response = await t.engine.run({ agentType: agent_type, prompt, workingDir, mode, signal, streaming: false, emit: () => undefined });
        return { response, agent_type, mode, success: true };
      },
    );
  });
}

/** POST /agents/run, which records a run with its events, vs the same route and service with recording off. */
async function legacyRecording(model: ScriptedModel): Promise<BenchResult> {
  const t: TestApp = await createTestApp({ model: { url: model.url }, env: { RATE_LIMIT_PER_MINUTE: '0' } });
  try {
    await unrecordedRoute(t);
    const file = join(t.workdir, 'small.ts');
    writeFileSync(file, 'export const x = 1;\n'.repeat(20));
    const script = () => {
      for (let i = 0; i < TOOL_STEPS; i++) model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: file } }));
      model.push(scripted.text('all read'));
    };
    const payload = { agent_type: 'explore', prompt: 'read it', working_dir: '.' };
    const call = (url: string) => async () => {
      script();
      const response = await t.app.inject({ method: 'POST', url, payload });
      const answer = response.json<{ response: string }>();
      if (response.statusCode !== 200 || answer.response !== 'all read') throw new Error(`run failed: ${response.body}`);
    };
    // Many short runs, taken in turns: one run is a few milliseconds, and the load of the machine shifts.
    const { baselineMs, subjectMs } = await interleavedMediansMs(call('/unrecorded/agents/run'), call('/agents/run'), 101, 10);
    return result(
      `POST /agents/run recorded as a run (${TOOL_STEPS} read_file steps, zero-latency model, SQLite)`,
      'the same route and service with recording off',
      baselineMs,
      subjectMs,
      1.2,
    );
  } finally {
    await t.close();
  }
}

function deferred(): { promise: Promise<number>; resolve: (value: number) => void } {
  let resolve: (value: number) => void = () => undefined;
  const promise = new Promise<number>((r) => (resolve = r));
  return { promise, resolve };
}

function median(values: readonly number[]): number {
  return percentile(values, 0.5);
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? Number.NaN;
}

const bench: Bench = async () => {
  const model = await startScriptedModel({ zeroLatency: true });
  try {
    const results = [await replay(model)];
    const latency = await crossReplica(model);
    if (latency) results.push(latency);
    else console.log('(cross-replica latency skipped: set TEST_DATABASE_URL to a PostgreSQL server)');
    results.push(await legacyRecording(model));
    return results;
  } finally {
    await model.close();
  }
};

export default bench;
