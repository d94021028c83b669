import { randomUUID } from 'node:crypto';
import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../support/databases.js';
import { readRunEvents } from '../support/run-events.js';
import { startService, type ServiceProcess } from '../support/service-process.js';
import { until } from '../support/until.js';
import { tempDir } from '../../../../test/helpers/temp-dirs.js';

/**
 * EXTENSIONS.md section 2, restarts and crashes: the service is a real process killed with SIGKILL
 * in the middle of a conversation turn, then started again on the same database. SQLite finds the
 * dead run at start-up; PostgreSQL (where replicas may share the database) once its lease runs out.
 */

const INTERRUPTED = '{"event":"error","error_message":"Run interrupted: the service stopped"}';

let cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});


describe.each(DIALECTS)('a service killed with SIGKILL mid-run, on %s', (dialect) => {
  let model: ScriptedModel;
  let database: TestDatabase;
  let workdir: string;

  async function boot(): Promise<ServiceProcess> {
    const service = await startService(
      {
        DATABASE_URL: database.url,
        LLM_BASE_URL: model.url,
        ALLOWED_PATHS: workdir,
        RATE_LIMIT_PER_MINUTE: '0',
        // Short enough for PostgreSQL to notice the dead replica's run within the test.
        RUN_LEASE_SECONDS: '1',
      },
      workdir,
    );
    cleanups.push(() => service.child.kill('SIGKILL'));
    return service;
  }

  it('shows the run interrupted with the events it stored, and frees its conversation for the next turn', async () => {
    workdir = tempDir('mada-restart-');
    database = await createTestDatabase(dialect);
    cleanups.push(() => database.drop());
    model = await startScriptedModel();
    cleanups.push(() => model.close());
    // The first answer streams two pieces and then hangs until the test ends.
    let release = (): void => undefined;
    const hang = new Promise<void>((resolve) => (release = resolve));
    cleanups.push(() => release());
    model.push(scripted.chunks('Partial ', 'answer ', scripted.until(hang)));

    // The local user's webhook: the run's run_ended must be stored with its interruption. Its
    // loopback address is refused when sending (WEBHOOK_ALLOW_PRIVATE is off), so it stays pending.
    const hook = await database.repository.webhooks.createWebhook(
      { id: randomUUID(), userId: 'local', url: 'http://127.0.0.1:9/hook', events: ['run_ended'], secret: 'a-secret-of-sixteen+', createdAt: new Date() },
      20,
    );

    const first = await boot();
    const json = { 'content-type': 'application/json' };
    const conversation = (await (await fetch(`${first.url}/conversations/`, { method: 'POST', headers: json, body: JSON.stringify({ agent_type: 'plan' }) })).json()) as { id: string };
    const started = await fetch(`${first.url}/conversations/${conversation.id}/runs`, { method: 'POST', headers: json, body: JSON.stringify({ content: 'a long question' }) });
    expect(started.status).toBe(202);
    const run = (await started.json()) as { id: string };
    const before = await readRunEvents(first.url, run.id, { maxFrames: 2 });
    expect(before.frames.map((f) => JSON.parse(f.data) as unknown)).toEqual([
      { event: 'chunk', data: 'Partial ' },
      { event: 'chunk', data: 'answer ' },
    ]);

    first.child.kill('SIGKILL');
    await first.exited;
    // Nothing ended it on the way down: it is still running in the database.
    expect((await database.repository.runs.findRun(run.id))?.status).toBe('running');

    const second = await boot();
    const runAt = async () => (await (await fetch(`${second.url}/runs/${run.id}`)).json()) as Record<string, unknown>;
    const after = await until(runAt, (r) => r.status === 'interrupted', 'the run to be interrupted');
    expect(after).toMatchObject({ status: 'interrupted', error: 'Run interrupted: the service stopped', response: null, conversation_id: conversation.id, last_event_id: 3 });
    expect(after.ended_at).not.toBeNull();
    // Stored with the interruption, not after it: there already once the run shows interrupted.
    const deliveries = await database.repository.webhooks.listDeliveries(hook.id, 10);
    expect(deliveries.map((d) => JSON.parse(d.body) as unknown)).toEqual([{ event: 'run_ended', at: after.ended_at, run_id: run.id, status: 'interrupted' }]);

    const events = await readRunEvents(second.url, run.id);
    expect(events.closedByServer).toBe(true);
    expect(events.frames).toEqual([...before.frames, { id: 3, data: INTERRUPTED }]);

    model.push(scripted.text('Recovered answer.'));
    const next = await fetch(`${second.url}/conversations/${conversation.id}/runs`, { method: 'POST', headers: json, body: JSON.stringify({ content: 'try again' }) });
    expect(next.status).toBe(202);
    const nextRun = (await next.json()) as { id: string };
    const done = await until(
      async () => (await (await fetch(`${second.url}/runs/${nextRun.id}`)).json()) as Record<string, unknown>,
      (r) => r.status !== 'queued' && r.status !== 'running',
      'the next turn to end',
    );
    expect(done).toMatchObject({ status: 'succeeded', response: 'Recovered answer.' });
    const detail = (await (await fetch(`${second.url}/conversations/${conversation.id}`)).json()) as { messages: { role: string; content: string }[] };
    expect(detail.messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'a long question'],
      ['user', 'try again'],
      ['assistant', 'Recovered answer.'],
    ]);
  }, 60_000);
});
