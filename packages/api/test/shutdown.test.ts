import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRunEvents, type EventFrame } from './support/run-events.js';
import { startService, type ServiceProcess } from './support/service-process.js';
import { tempDir } from '../../../test/helpers/temp-dirs.js';

const SHUTTING_DOWN = { detail: 'Service is shutting down' };
const json = { 'content-type': 'application/json' };

// Each test starts a service process (the second, two), and waits out a grace period: more than the
// default 20 s on a loaded machine.
describe('SIGTERM with runs in progress', { timeout: 60_000 }, () => {
  let model: ScriptedModel;
  let service: ServiceProcess | undefined;
  let workdir: string;

  beforeEach(async () => {
    model = await startScriptedModel();
    workdir = tempDir('mada-shutdown-');
  });
  afterEach(async () => {
    if (service && service.child.exitCode === null) service.child.kill('SIGKILL');
    service = undefined;
    await model.close();
  });

  const boot = async (graceSeconds: string): Promise<ServiceProcess> =>
    (service = await startService({ LLM_BASE_URL: model.url, SHUTDOWN_GRACE_SECONDS: graceSeconds, RATE_LIMIT_PER_MINUTE: '0' }, workdir));
  const post = (path: string, body: unknown) => fetch(`${service!.url}${path}`, { method: 'POST', headers: json, body: JSON.stringify(body) });
  const startRun = async (): Promise<string> => {
    const response = await post('/runs', { agent_type: 'plan', prompt: 'make a plan' });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };
  /** Resolves once the service has sent the run's first frame: the run is executing. */
  const firstFrame = (runId: string) => readRunEvents(service!.url, runId, { maxFrames: 1 });
  const lastEvent = (frames: EventFrame[]) => JSON.parse(frames.at(-1)!.data) as Record<string, unknown>;

  it('keeps serving through the grace period, refuses new runs with 503, lets the running one finish, and exits 0', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    model.push(scripted.chunks('Step one. ', scripted.until(held), 'Step two.'));
    await boot('30');
    const conversation = (await (await post('/conversations/', { agent_type: 'plan', working_dir: workdir })).json()) as { id: string };
    const runId = await startRun();
    await firstFrame(runId);
    const following = readRunEvents(service!.url, runId);

    service!.child.kill('SIGTERM');
    await expect.poll(() => service!.output(), { timeout: 10_000 }).toContain('refusing new runs');
    for (const [path, body] of [
      ['/runs', { agent_type: 'plan', prompt: 'another' }],
      ['/agents/run', { agent_type: 'plan', prompt: 'another' }],
      ['/agents/stream', { agent_type: 'plan', prompt: 'another' }],
      [`/conversations/${conversation.id}/runs`, { content: 'hello' }],
      [`/conversations/${conversation.id}/messages`, { content: 'hello' }],
      [`/conversations/${conversation.id}/stream`, { content: 'hello' }],
    ] as const) {
      const refused = await post(path, body);
      expect({ path, status: refused.status }).toEqual({ path, status: 503 });
      expect(await refused.json()).toEqual(SHUTTING_DOWN);
    }
    // Reading still works, and a refused turn stored no message.
    const run = await fetch(`${service!.url}/runs/${runId}`);
    expect(run.status).toBe(200);
    expect(((await run.json()) as { status: string }).status).toBe('running');
    const messages = await fetch(`${service!.url}/conversations/${conversation.id}/messages`);
    expect(((await messages.json()) as { messages: unknown[] }).messages).toEqual([]);

    release();
    const { frames, closedByServer } = await following;
    expect(closedByServer).toBe(true);
    expect(lastEvent(frames)).toEqual({ event: 'done', mode: 'default' });
    expect(await service!.exited).toBe(0);
  });

  it('interrupts a run still going when the grace period ends, with its final error event, and exits 0', async () => {
    model.push(scripted.chunks('Thinking ', scripted.until(new Promise(() => undefined))));
    // Long enough for the 503 below to be asked for inside it on a loaded machine.
    await boot('4');
    const runId = await startRun();
    await firstFrame(runId);
    const following = readRunEvents(service!.url, runId);

    service!.child.kill('SIGTERM');
    await expect.poll(() => service!.output(), { timeout: 10_000 }).toContain('refusing new runs');
    const refused = await post('/runs', { agent_type: 'plan', prompt: 'another' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toEqual(SHUTTING_DOWN);

    const { frames, closedByServer } = await following;
    expect(closedByServer).toBe(true);
    expect(lastEvent(frames)).toEqual({ event: 'error', error_message: 'Run interrupted: the service stopped' });
    expect(await service!.exited).toBe(0);
    expect(service!.output()).toContain('grace period over');

    // Stored as interrupted by the stopping service itself: a restart finds nothing to recover.
    const restarted = await boot('1');
    const stored = (await (await fetch(`${restarted.url}/runs/${runId}`)).json()) as Record<string, unknown>;
    expect(stored).toMatchObject({ status: 'interrupted', error: 'Run interrupted: the service stopped' });
    expect(restarted.output()).not.toContain('runs of a stopped service marked interrupted');
  });
});
