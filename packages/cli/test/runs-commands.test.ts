import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { scripted } from '@mada/testkit';
import type { RunListResponse, RunResponse } from '@mada/protocol';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { startCuttingProxy, type CuttingProxy } from './support/cutting-proxy.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';

let running: ServiceWithModel;
let workspace: string;
let home: string;
let proxy: CuttingProxy | undefined;

beforeAll(async () => {
  running = await startServiceWithModel();
  workspace = running.service.workspace;
  writeFileSync(join(workspace, 'notes.txt'), 'the answer is 42\n');
});

afterAll(async () => {
  await running?.stop();
});

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  expect(running.model.remaining).toBe(0);
});

const mada = (args: string[], url = running.service.url) => runMada([...args, '-a', url], { home, timeoutMs: 30_000 });

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: body === undefined ? {} : { 'content-type': 'application/json' } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(`${running.service.url}${path}`, init);
  return (await response.json()) as T;
}

const startRun = (prompt: string): Promise<RunResponse> =>
  api<RunResponse>('POST', '/runs', { agent_type: 'task', prompt, working_dir: workspace, mode: 'default' });

/** Polls the run until `done` says so (the test's own bound is vitest's timeout). */
async function waitForRun(id: string, done: (run: RunResponse) => boolean): Promise<RunResponse> {
  for (;;) {
    const run = await api<RunResponse>('GET', `/runs/${id}`);
    if (done(run)) return run;
    await sleep(50);
  }
}

/** The task agent reads the notes, then answers. */
function readThenAnswer(answer: string): void {
  running.model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, 'notes.txt') } }), scripted.text(answer));
}

/** Several CLI processes in one test: room for a loaded CI machine. */
const SLOW = 60_000;

const ended = (run: RunResponse): boolean => run.ended_at !== null;

describe('mada runs', () => {
  it('lists the caller runs newest first, filters by status, and prints JSON', async () => {
    readThenAnswer('Listed and done.');
    const run = await startRun(`list me please, ${'and then some more '.repeat(5)}`);
    await waitForRun(run.id, ended);

    const table = await mada(['runs']);
    expect(table.code).toBe(0);
    expect(table.stderr).toBe('');
    // Short ids, and the prompt clipped: a line fits 80 columns (the width of a pipe).
    const line = table.stdout.split('\n').find((text) => text.startsWith(`${run.id.slice(0, 8)} `));
    expect(line).toMatch(/^[0-9a-f]{8} {2}succeeded\s+task\s+\d{4}-\d\d-\d\d \d\d:\d\d\s+list me please, and then some .*…$/);
    for (const text of table.stdout.trimEnd().split('\n')) expect([...text].length).toBeLessThanOrEqual(80);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+STATUS\s+AGENT\s+CREATED\s+PROMPT$/);

    const cancelledOnly = await mada(['runs', '--status', 'cancelled']);
    expect(cancelledOnly.stdout).not.toContain(run.id);

    const json = JSON.parse((await mada(['runs', '--json', '--limit', '1'])).stdout) as RunListResponse;
    expect(json.runs.map((listed) => listed.id)).toEqual([run.id]);
    expect(json.total).toBeGreaterThanOrEqual(1);
  }, SLOW);

  it('refuses a status the service does not know before calling it', async () => {
    const result = await mada(['runs', '--status', 'sleeping']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("argument 'sleeping' is invalid");
  });
});

describe('mada attach', () => {
  it('prints every frame exactly once although the connection is cut three times mid-stream', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    running.model.push(
      // Relative, so that the first frame stays shorter than the proxy's first cut wherever the workspace lies.
      scripted.toolCalls({ name: 'read_file', arguments: { file_path: 'notes.txt' } }),
      scripted.toolCalls({ name: 'glob_files', arguments: { pattern: '*.txt' } }),
      scripted.chunks('The notes ', 'say ', scripted.until(gate), 'the answer ', 'is ', '42.'),
    );
    const run = await startRun('what do the notes say?');
    proxy = await startCuttingProxy(running.service.url, 3, 150);
    const attached = mada(['attach', run.id], proxy.url);
    // Part of the run is stored and the client is reading it; the rest arrives live.
    await waitForRun(run.id, (current) => current.last_event_id >= 5);
    while (proxy.eventRequests.length === 0) await sleep(50);
    release();
    const cut = await attached;
    expect(cut.code).toBe(0);

    // The same run read in one piece: what a client that never lost its connection shows.
    const whole = await mada(['attach', run.id]);
    expect(whole.code).toBe(0);
    expect(whole.stderr).toBe('');
    // Past the heading (it names the status at attach time), the output is the same.
    const body = (stdout: string): string => stdout.slice(stdout.indexOf('\n') + 1);
    expect(body(cut.stdout)).toBe(body(whole.stdout));
    expect(whole.stdout.match(/→ read_file notes\.txt/g)).toHaveLength(1);
    expect(whole.stdout.match(/→ glob_files/g)).toHaveLength(1);
    expect(whole.stdout).toContain('The notes say the answer is 42.\n');

    expect(proxy.eventRequests.length).toBeGreaterThanOrEqual(4);
    expect(cut.stderr.match(/reattaching after event \d+/g)?.length).toBe(proxy.eventRequests.length - 1);
    for (const head of proxy.eventRequests.slice(1)) expect(head).toMatch(/\r\nlast-event-id: [1-9]\d*\r\n/i);
  }, SLOW);

  it('with --from-now shows only what the run does after attaching', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    running.model.push(
      scripted.toolCalls({ name: 'read_file', arguments: { file_path: join(workspace, 'notes.txt') } }),
      scripted.chunks(scripted.until(gate), 'Only ', 'the end.'),
    );
    const run = await startRun('attach late');
    await waitForRun(run.id, (current) => current.last_event_id >= 2);
    // A proxy that cuts nothing, to see when the client has started reading the events.
    proxy = await startCuttingProxy(running.service.url, 0, 0);
    const attached = mada(['attach', '--from-now', run.id], proxy.url);
    while (proxy.eventRequests.length === 0) await sleep(50);
    release();
    const result = await attached;
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Only the end.');
    expect(result.stdout).not.toContain('read_file');
  });

  it('with --from-now on a run that has ended, says how it ended instead of replaying it', async () => {
    readThenAnswer('Finished already.');
    const run = await startRun('quick one');
    await waitForRun(run.id, ended);
    const result = await mada(['attach', '--from-now', run.id]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('The run has already ended: succeeded');
    expect(result.stdout).not.toContain('Finished already.');
  });

  it('names an unknown run as such', async () => {
    const result = await mada(['attach', '00000000-0000-4000-8000-000000000000']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('mada: Run not found (404); it may have been deleted; `mada runs` lists yours\n');
  });

  it('takes the first 8 characters of a run id, and says plainly when they name no run or too little', async () => {
    readThenAnswer('Prefixes work.');
    const run = await startRun('read the notes');
    await waitForRun(run.id, ended);
    const attached = await mada(['attach', run.id.slice(0, 8).toUpperCase()]);
    expect(attached.code, attached.stderr).toBe(0);
    expect(attached.stdout).toContain(`Run ${run.id} · agent task · succeeded`);
    expect(attached.stdout).toContain('Prefixes work.');

    const unknown = await mada(['diff', run.id.startsWith('0') ? 'ffffffff' : '00000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^mada: No run of yours has an id starting with (ffffffff|00000000); `mada runs` lists them\n$/);
    const short = await mada(['revert', run.id.slice(0, 7)]);
    expect(short.code).toBe(2);
    expect(short.stderr).toBe(`mada: ${run.id.slice(0, 7)} is too short for a run id; give at least 8 characters of it (\`mada runs\` lists them)\n`);
  }, SLOW);
});

describe('mada cancel', () => {
  it('stops a running run, prints its final status, and says so clearly the second time', async () => {
    running.model.push(scripted.stall());
    const before = running.model.requests.length;
    const run = await startRun('never finishes');
    // The model call is under way: cancelling now has something to stop.
    while (running.model.requests.length === before) await sleep(50);

    const first = await mada(['cancel', run.id]);
    expect(first.stderr).toBe('');
    expect(first.stdout).toBe(`Run ${run.id}: cancelled\n`);
    expect(first.code).toBe(0);
    expect(await running.model.requests.at(-1)!.outcome).toBe('client-closed');

    const again = await mada(['cancel', run.id]);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('mada: The run has already ended (409 Run already ended); `mada runs` shows how it ended\n');
  }, SLOW);
});
