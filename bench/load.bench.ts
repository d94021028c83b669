/**
 * The load test of Step 14, against the real service in a child process on loopback: 100 streamed
 * runs started at once against a scripted model that sends a token every 10 ms, while 1,000 idle
 * followers hold event streams of runs that are waiting on the model. Bounded: fixed counts and a
 * deadline for the whole bench. The service runs as `npm start` runs it, from its build.
 *
 * The 100 runs come twice. The first round meets a service that has just started: V8 is still
 * compiling the code every run goes through, on the same two cores, and that round's first frames
 * come later. The second round is what a service that has been up for a while gives, and the
 * figures with targets are its own; the first round's p95 is printed beside them.
 */
import { setMaxListeners } from 'node:events';
import { Agent, request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { startService, TSX } from '../packages/api/test/support/service-process.js';
import type { ModelCommand } from './load-model.js';
import { absolute, type Bench, type BenchResult } from './harness.js';

const STREAMED_RUNS = 100;
const TOKENS_PER_RUN = 50;
const TOKEN_INTERVAL_MS = 10;
const IDLE_RUNS = 10;
const IDLE_FOLLOWERS = 1000;
const DEADLINE_MS = 180_000;

interface Followed {
  /** Milliseconds from `since` to the first frame. */
  firstFrameMs: number;
  /** Resolves with the last frame's JSON once the server closes the stream. */
  last: Promise<Record<string, unknown> | undefined>;
}

/**
 * The bench's client is node:http on a keep-alive agent: fetch costs the bench process several
 * times more CPU per request, and the bench shares the service's two cores, so a heavier client
 * showed up as the service's latency.
 */
const agent = new Agent({ keepAlive: true });

function request(url: string, options: RequestOptions, signal: AbortSignal, body?: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { ...options, agent, signal }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function textOf(response: IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const part of response) text += part as string;
  return text;
}

/** Opens GET /runs/{id}/events and resolves at its first frame; `last` settles when the stream ends. */
async function follow(base: string, runId: string, since: number, signal: AbortSignal): Promise<Followed> {
  const response = await request(`${base}/runs/${runId}/events`, { headers: { accept: 'text/event-stream' } }, signal);
  if (response.statusCode !== 200) throw new Error(`events of ${runId}: ${response.statusCode}`);
  response.setEncoding('utf8');
  let text = '';
  const frames = (): string[] => [...text.matchAll(/^data: (.*)$/gm)].map((m) => m[1]!);
  const firstFrameMs = await new Promise<number>((resolve, reject) => {
    const onData = (part: string): void => {
      text += part;
      if (!/^data: /m.test(text)) return;
      response.off('data', onData);
      response.pause();
      resolve(performance.now() - since);
    };
    response.on('data', onData);
    response.once('error', reject);
    response.once('end', () => reject(new Error(`events of ${runId} ended before any frame`)));
  });
  const last = (async () => {
    for await (const part of response) text += part as string;
    const data = frames().at(-1);
    return data === undefined ? undefined : (JSON.parse(data) as Record<string, unknown>);
  })();
  return { firstFrameMs, last };
}

async function startRun(base: string, prompt: string, signal: AbortSignal): Promise<string> {
  const body = JSON.stringify({ agent_type: 'plan', prompt });
  const response = await request(`${base}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, signal, body);
  const text = await textOf(response);
  if (response.statusCode !== 202) throw new Error(`POST /runs answered ${response.statusCode}: ${text}`);
  return (JSON.parse(text) as { id: string }).id;
}

interface ModelProcess {
  url: string;
  /** Sends a command and resolves once the model has applied it. */
  command(command: ModelCommand): Promise<void>;
  close(): Promise<void>;
}

/** Starts the scripted model runtime of load-model.ts in a child process. */
async function startModelProcess(): Promise<ModelProcess> {
  const script = fileURLToPath(new URL('./load-model.ts', import.meta.url));
  const child = spawn(process.execPath, ['--conditions=mada-source', '--import', TSX, script], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = once(child, 'exit');
  const reply = async (): Promise<{ kind: string; url?: string }> => {
    const [message] = (await Promise.race([once(child, 'message'), exited.then(() => [{ kind: 'exited' }])])) as [{ kind: string; url?: string }];
    if (message.kind === 'exited') throw new Error('the model process exited');
    return message;
  };
  const ready = await reply();
  return {
    url: ready.url!,
    async command(command) {
      child.send(command);
      await reply();
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Kibibytes of a /proc/<pid>/status field (VmRSS now, VmHWM the peak so far). */
function memoryKib(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]);
}

/** CPU milliseconds the process has used so far, all its threads (/proc/<pid>/stat utime + stime). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
}
/** The kernel's clock ticks per second of /proc/<pid>/stat: 100 on Linux. */
const CLOCK_TICKS = 100;

/** Milliseconds the process's main thread ran, and waited runnable for a core (/proc/<pid>/schedstat). */
function scheduledMs(pid: number): { ran: number; waited: number } {
  const [ran, waited] = readFileSync(`/proc/${pid}/schedstat`, 'utf8').trim().split(' ').map((ns) => Number(ns) / 1e6);
  return { ran: ran!, waited: waited! };
}

/**
 * Builds the service as `npm start` does: the load test measures what users run (the same code
 * through tsx, with its name-keeping helpers, cost the service about 5% more CPU in the streamed
 * phase). Incremental: quick when nothing changed.
 */
function buildService(): void {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-b', 'packages/api'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
}

const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;

interface Round {
  /** Milliseconds to each run's first frame, sorted. */
  firstFrames: number[];
  /** Milliseconds to each run's 202, sorted. */
  answers: number[];
  /** Each run's last frame. */
  lasts: Array<Record<string, unknown> | undefined>;
  elapsedS: number;
  /** The service's CPU and scheduling while the round ran. */
  sched: string;
}

/** 100 runs started at once, each followed from its 202 on, until every one has ended. */
async function streamedRound(base: string, model: ModelProcess, pid: number, signal: AbortSignal): Promise<Round> {
  await model.command({ kind: 'streamed', runs: STREAMED_RUNS, tokens: TOKENS_PER_RUN, intervalMs: TOKEN_INTERVAL_MS });
  const cpuBefore = cpuMs(pid);
  const schedBefore = scheduledMs(pid);
  const started = performance.now();
  const streamed = await Promise.all(
    Array.from({ length: STREAMED_RUNS }, async (_, i) => {
      const since = performance.now();
      const runId = await startRun(base, `streamed ${i}`, signal);
      const answeredMs = performance.now() - since;
      const followed = await follow(base, runId, since, signal);
      return { answeredMs, firstFrameMs: followed.firstFrameMs, last: await followed.last };
    }),
  );
  const elapsedS = (performance.now() - started) / 1000;
  const cpu = cpuMs(pid) - cpuBefore;
  const schedAfter = scheduledMs(pid);
  // A shared machine's other work shows up as the event loop's wait for a core, not as its own cost.
  const sched = `service while the runs streamed: ${cpu.toFixed(0)} ms of CPU in ${(elapsedS * 1000).toFixed(0)} ms; its event loop ran ${(schedAfter.ran - schedBefore.ran).toFixed(0)} ms and waited ${(schedAfter.waited - schedBefore.waited).toFixed(0)} ms for a free core`;
  return {
    firstFrames: streamed.map((s) => s.firstFrameMs).sort((a, b) => a - b),
    answers: streamed.map((s) => s.answeredMs).sort((a, b) => a - b),
    lasts: streamed.map((s) => s.last),
    elapsedS,
    sched,
  };
}

const bench: Bench = async () => {
  const signal = AbortSignal.timeout(DEADLINE_MS);
  // Every request of the bench listens on this one deadline.
  setMaxListeners(0, signal);
  buildService();
  const model = await startModelProcess();
  const workdir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-load-')));
  // The model process outlives a service that fails to start unless it is ended here.
  const service = await startService(
    {
      LLM_BASE_URL: model.url,
      MAX_CONCURRENT_RUNS: String(STREAMED_RUNS + IDLE_RUNS),
      MAX_RUNS_PER_USER: String(STREAMED_RUNS + IDLE_RUNS),
      RATE_LIMIT_PER_MINUTE: '0',
      // Every client here shares one loopback address, where a deployment's 1,100 clients would have many.
      MAX_CONNECTIONS_PER_ADDRESS: '4096',
      SHUTDOWN_GRACE_SECONDS: '0',
    },
    workdir,
    { built: true },
  ).catch(async (error: unknown) => {
    await model.close();
    rmSync(workdir, { recursive: true, force: true });
    throw error;
  });
  const pid = service.child.pid!;
  try {
    const restMib = memoryKib(pid, 'VmRSS') / 1024;

    // Runs that wait on the model after one token: what 1,000 followers sit on without traffic.
    await model.command({ kind: 'idle', runs: IDLE_RUNS });
    const idleRuns = await Promise.all(Array.from({ length: IDLE_RUNS }, (_, i) => startRun(service.url, `idle ${i}`, signal)));
    const followers = await Promise.all(
      Array.from({ length: IDLE_FOLLOWERS }, (_, i) => follow(service.url, idleRuns[i % IDLE_RUNS]!, performance.now(), signal)),
    );

    const first = await streamedRound(service.url, model, pid, signal);
    const second = await streamedRound(service.url, model, pid, signal);

    await model.command({ kind: 'release' });
    const idleEnds = await Promise.all(followers.map((f) => f.last));
    const failed = [...first.lasts, ...second.lasts, ...idleEnds].filter((last) => last?.event !== 'done').length;
    const firstFrames = second.firstFrames;
    // Where the first frame's time goes: waiting for the 202 (the connection accepted, the request
    // read and answered) or after it (the events request, the model's first token).
    const answers = second.answers;
    const answered = `the 202 of POST /runs came after ${percentile(answers, 50).toFixed(0)} ms at the median, ${percentile(answers, 95).toFixed(0)} ms at the 95th percentile`;
    const coldRound = `in the first round after start: p95 ${percentile(first.firstFrames, 95).toFixed(0)} ms, p50 ${percentile(first.firstFrames, 50).toFixed(0)} ms`;
    const peakMib = memoryKib(pid, 'VmHWM') / 1024;
    const ideal = (TOKENS_PER_RUN * TOKEN_INTERVAL_MS) / 1000;
    const elapsedS = second.elapsedS;

    const throughput: BenchResult = {
      name: `runs per second: ${STREAMED_RUNS} streamed runs at once, ${TOKENS_PER_RUN} tokens each, ${IDLE_FOLLOWERS} idle followers`,
      baseline: `one run alone at best (${ideal.toFixed(2)} s per run)`,
      baselineMs: 1 / ideal,
      subjectMs: STREAMED_RUNS / elapsedS,
      ratio: STREAMED_RUNS / elapsedS,
      kind: 'absolute',
      unit: 'runs/s',
      note: `all ${STREAMED_RUNS} runs of the second round done in ${elapsedS.toFixed(2)} s`,
    };
    return [
      absolute(`failed runs (of 2 x ${STREAMED_RUNS} streamed and ${IDLE_RUNS} idle)`, 'none', 0, failed, 'runs', 1),
      throughput,
      absolute('p95 time from POST /runs to the first event frame (second round)', 'p50', percentile(firstFrames, 50), percentile(firstFrames, 95), 'ms', 400, `${coldRound}; ${answered}; ${second.sched}`),
      absolute('service peak RSS (VmHWM)', 'RSS at rest', restMib, peakMib, 'MiB', 1024),
    ];
  } finally {
    agent.destroy();
    service.child.kill('SIGTERM');
    await service.exited;
    await model.close();
    // The service's database and working directory: a few MB left behind by every run otherwise.
    rmSync(workdir, { recursive: true, force: true });
  }
};

export default bench;
