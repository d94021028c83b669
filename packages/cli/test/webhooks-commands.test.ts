import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { scripted } from '@mada/testkit';
import type { RunResponse, WebhookDeliveryListResponse } from '@mada/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { startMadaService, startServiceWithModel, type ServiceWithModel } from './support/service.js';

let running: ServiceWithModel;
let receiver: Server;
let hookUrl: string;
const received: string[] = [];

beforeAll(async () => {
  // The receiver is on loopback, which the service refuses without this setting.
  running = await startServiceWithModel({ WEBHOOK_ALLOW_PRIVATE: 'true' });
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      response.writeHead(204).end();
    });
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});

afterAll(async () => {
  await running?.stop();
  receiver?.close();
});

const mada = (args: string[], url = running.service.url) => runMada([...args, '-a', url], { home: tempDir('mada-cli-home-'), timeoutMs: 30_000 });

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method, headers: body === undefined ? {} : { 'content-type': 'application/json' } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(`${running.service.url}${path}`, init);
  return (await response.json()) as T;
}

/** Polls until `done` holds (the test's own bound is vitest's timeout). */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await sleep(50);
  }
}

describe('mada webhooks', () => {
  it('adds, lists, shows the deliveries of and removes webhooks, by id prefix', async () => {
    // From none (vitest retries a test once: an attempt before may have left some).
    for (const { id } of (await api<{ webhooks: { id: string }[] }>('GET', '/me/webhooks')).webhooks) await fetch(`${running.service.url}/me/webhooks/${id}`, { method: 'DELETE' });
    const secret = 'my-own-secret-of-twenty-chars';
    const added = await mada(['webhooks', 'add', hookUrl, '--event', 'run_ended', '--secret', secret]);
    expect(added.code, added.stderr).toBe(0);
    const [shown, note] = added.stdout.split('\n');
    expect(shown).toBe(secret);
    expect(note).toMatch(/secret is shown once/);
    const id = /webhook ([0-9a-f-]{36}) \(run_ended to /.exec(note!)![1]!;

    // No --event: both; no --secret: the service makes one.
    const long = await mada(['webhooks', 'add', `${hookUrl}/${'deep/'.repeat(20)}`]);
    expect(long.code, long.stderr).toBe(0);
    expect(long.stdout.split('\n')[0]).toMatch(/^whsec_\S{43}$/);

    const listed = await mada(['webhooks']);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID +EVENTS +CREATED +URL$/);
    expect(lines[1]).toMatch(/^[0-9a-f]{8} +approval_requested,run_ended +\d{4}-\d\d-\d\d +http:\/\/127\.0\.0\.1:\d+\/\S*…$/);
    expect(lines[2]).toMatch(new RegExp(`^${id.slice(0, 8)} +run_ended +\\d{4}-\\d\\d-\\d\\d +${hookUrl.replace(/\./g, '\\.')}$`));
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    expect(listed.stdout).not.toContain(secret);

    const empty = await mada(['webhooks', 'deliveries', id.slice(0, 8)]);
    expect([empty.code, empty.stdout]).toEqual([0, 'No deliveries yet: one is made when a run of yours asks for an approval or ends.\n']);

    // A run ends: each webhook's receiver hears of it, and the delivery is recorded as delivered.
    writeFileSync(join(running.service.workspace, 'notes.txt'), 'the answer is 42\n');
    running.model.push(scripted.toolCalls({ name: 'read_file', arguments: { file_path: 'notes.txt' } }), scripted.text('The notes say 42.'));
    const run = await api<RunResponse>('POST', '/runs', { agent_type: 'task', prompt: 'finish', working_dir: running.service.workspace, mode: 'default' });
    await waitFor(
      () => api<WebhookDeliveryListResponse>('GET', `/me/webhooks/${id}/deliveries`),
      (list) => list.deliveries[0]?.status === 'delivered',
    );
    expect(received.map((body) => JSON.parse(body) as unknown)).toContainEqual(expect.objectContaining({ event: 'run_ended', run_id: run.id, status: 'succeeded' }));
    const deliveries = await mada(['webhooks', 'deliveries', id.slice(0, 10)]);
    expect(deliveries.code, deliveries.stderr).toBe(0);
    const rows = deliveries.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^CREATED +EVENT +STATUS +TRIES +RESULT +LAST\/NEXT$/);
    expect(rows[1]).toMatch(/^(just now|\d+m ago) +run_ended +delivered +1 +204 +(just now|\d+m ago)$/);
    expect(rows).toHaveLength(2);

    const removed = await mada(['webhooks', 'rm', id.slice(0, 8)]);
    expect([removed.code, removed.stdout]).toEqual([0, `Webhook ${id} deleted.\n`]);
    expect((await mada(['webhooks'])).stdout).not.toContain(id.slice(0, 8));

    const again = await mada(['webhooks', 'rm', id.slice(0, 8)]);
    expect([again.code, again.stderr]).toEqual([1, `mada: No webhook of yours has an id starting with ${id.slice(0, 8)}; \`mada webhooks\` lists them\n`]);
    const gone = await mada(['webhooks', 'deliveries', id]);
    expect([gone.code, gone.stderr]).toEqual([1, 'mada: Webhook not found (404); `mada webhooks` lists yours\n']);
    // Eight client processes and a run: room for a loaded machine.
  }, 120_000);

  it('refuses a bad secret or event before asking, and says why the service refused the limit', async () => {
    const short = await mada(['webhooks', 'add', hookUrl, '--secret', 'too-short']);
    expect(short.code).toBe(2);
    expect(short.stderr).toContain('--secret must be 16 to 256 printable ASCII characters without spaces');
    const event = await mada(['webhooks', 'add', hookUrl, '--event', 'run_started']);
    expect(event.code).toBe(2);
    expect(event.stderr).toContain('must be one of approval_requested, run_ended');

    // 20 is the most a user may have (one is left from the test above).
    const { webhooks } = await api<{ webhooks: unknown[] }>('GET', '/me/webhooks');
    for (let n = webhooks.length; n < 20; n += 1) await api('POST', '/me/webhooks', { url: hookUrl, events: ['run_ended'] });
    const full = await mada(['webhooks', 'add', hookUrl]);
    expect([full.code, full.stderr]).toEqual([1, 'mada: Webhook limit reached (20): delete one first (409); `mada webhooks rm <id>` deletes one\n']);
  }, 60_000);

  it("shows the service's reason for refusing a private address", async () => {
    const strict = await startMadaService();
    try {
      const refused = await mada(['webhooks', 'add', 'http://127.0.0.1:9/hook'], strict.url);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(
        'mada: The service refused the URL (422 Webhook URL resolves to a loopback, private or link-local address); a receiver on a private network needs WEBHOOK_ALLOW_PRIVATE=true on the service\n',
      );
      const none = await mada(['webhooks'], strict.url);
      expect([none.code, none.stdout]).toEqual([0, 'No webhooks. Add one with: mada webhooks add <url>\n']);
    } finally {
      await strict.stop();
    }
  }, 60_000);
});
