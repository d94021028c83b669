import { scripted } from '@mada/testkit';
import type { RunListResponse } from '@mada/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiClient } from '../src/api/client.js';
import { RequestCancelledError } from '../src/api/errors.js';
import { startHoldingProxy } from './support/holding-proxy.js';
import { startServiceWithModel, type ServiceWithModel } from './support/service.js';

let running: ServiceWithModel;

beforeAll(async () => {
  running = await startServiceWithModel();
});

afterAll(async () => {
  await running?.stop();
});

describe('Ctrl-C while a run is being started', () => {
  it('cancels the run the service started, though its id never reached the client, and starts no other', async () => {
    const service = running.service.url;
    const created = await fetch(`${service}/conversations/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ agent_type: 'task', working_dir: running.service.workspace }),
    });
    const conversation = ((await created.json()) as { id: string }).id;
    // The run would otherwise answer and end on its own before it could be seen cancelled.
    running.model.push(scripted.stall());
    const proxy = await startHoldingProxy(service, /^POST \/conversations\/[^ ]+\/runs /);
    try {
      const client = new ApiClient({ baseUrl: proxy.url, connectTimeoutMs: 5_000, streamTimeoutMs: 30_000 });
      const ctrlC = new AbortController();
      const starting = client.startConversationRun(conversation, { content: 'rename the helper' }, ctrlC.signal);
      await proxy.answered;
      ctrlC.abort();
      await expect(starting).rejects.toBeInstanceOf(RequestCancelledError);

      const listed = (await (await fetch(`${service}/runs?limit=10`)).json()) as RunListResponse;
      expect(listed.runs.map((run) => run.status)).toEqual(['cancelled']);
      const detail = (await (await fetch(`${service}/conversations/${conversation}`)).json()) as { messages: { role: string; content: string }[] };
      expect(detail.messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['rename the helper']);
    } finally {
      await proxy.close();
    }
  });
});
