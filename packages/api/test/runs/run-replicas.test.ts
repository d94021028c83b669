import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, TEST_DATABASE_URL, type TestDatabase } from '../support/databases.js';
import { followRunEventsOver, readRunEvents, type EventFrame } from '../support/run-events.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

/**
 * EXTENSIONS.md section 2, several replicas: two real service processes on one PostgreSQL database.
 * A run executes on replica A; replica B serves it, follows its events live and cancels it.
 */

let cleanups: (() => unknown)[] = [];

const json = { 'content-type': 'application/json' };

/** A promise and its resolve function (Promise.withResolvers needs Node 22). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe.skipIf(!TEST_DATABASE_URL)('two replicas on one PostgreSQL database', () => {
  let model: ScriptedModel;
  let database: TestDatabase;
  let a: ServiceProcess;
  let b: ServiceProcess;

  beforeEach(async () => {
    const workdir = tempDir('mada-replicas-');
    database = await createTestDatabase('postgres');
    cleanups.push(() => database.drop());
    model = await startScriptedModel();
    cleanups.push(() => model.close());
    const env = { DATABASE_URL: database.url, LLM_BASE_URL: model.url, ALLOWED_PATHS: workdir, RATE_LIMIT_PER_MINUTE: '0', RUN_LEASE_SECONDS: '2' };
    [a, b] = await Promise.all([startService(env, workdir), startService(env, workdir)]);
    cleanups.push(() => a.child.kill('SIGKILL'), () => b.child.kill('SIGKILL'));
  }, 60_000);

  afterEach(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    cleanups = [];
  });

  const startRun = async (on: ServiceProcess): Promise<string> => {
    const response = await fetch(`${on.url}/runs`, { method: 'POST', headers: json, body: JSON.stringify({ agent_type: 'plan', prompt: 'go slowly' }) });
    expect(response.status).toBe(202);
    return ((await response.json()) as { id: string }).id;
  };

  it('streams every frame of a run executing on A to a follower on B as it happens, in order, ending with done', async () => {
    // Each piece waits until B's follower has received the one before: the run can only finish if
    // B delivers its frames while it is still executing on A.
    const pieces = Array.from({ length: 8 }, (_, i) => `piece${i} `);
    const arrived = pieces.map(() => deferred());
    model.push(scripted.chunks(...pieces.flatMap((piece, i) => (i === 0 ? [piece] : [scripted.until(arrived[i - 1]!.promise), piece]))));
    const runId = await startRun(a);

    const chunksSeen: string[] = [];
    const seenOnB = await followRunEventsOver(b.url, runId, (frame: EventFrame) => {
      const parsed = JSON.parse(frame.data) as { event: string; data?: string };
      const index = pieces.indexOf(parsed.data ?? '');
      if (parsed.event === 'chunk' && index >= 0) {
        chunksSeen.push(parsed.data!);
        arrived[index]!.resolve();
      }
    });

    expect(chunksSeen).toEqual(pieces);
    expect(seenOnB.map((f) => f.id)).toEqual(seenOnB.map((_, i) => i + 1));
    expect(seenOnB.at(-1)?.data).toBe('{"event":"done","mode":"default"}');
    const onA = await readRunEvents(a.url, runId);
    expect(seenOnB).toEqual(onA.frames);
    const fromB = (await (await fetch(`${b.url}/runs/${runId}`)).json()) as Record<string, unknown>;
    expect(fromB).toMatchObject({ status: 'succeeded', response: pieces.join(''), last_event_id: seenOnB.length });
  }, 60_000);

  it('stops the run executing on A when B is asked to cancel it', async () => {
    let release = (): void => undefined;
    const hang = new Promise<void>((resolve) => (release = resolve));
    cleanups.push(() => release());
    model.push(scripted.chunks('started ', scripted.until(hang)));
    const runId = await startRun(a);
    await readRunEvents(b.url, runId, { maxFrames: 1 });
    const exchange = model.requests.at(-1)!;

    const cancel = await fetch(`${b.url}/runs/${runId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(202);
    expect(await cancel.json()).toMatchObject({ id: runId, status: 'cancelled', error: 'Run cancelled' });

    // A notices at its next lease renewal and aborts its model call.
    expect(await exchange.outcome).toBe('client-closed');
    const events = await readRunEvents(a.url, runId);
    expect(events.frames.map((f) => f.data)).toEqual(['{"event":"chunk","data":"started "}', '{"event":"error","error_message":"Run cancelled"}']);
    const again = await fetch(`${a.url}/runs/${runId}/cancel`, { method: 'POST' });
    expect([again.status, await again.json()]).toEqual([409, { detail: 'Run already ended' }]);
  }, 60_000);
});
