import { scripted, startScriptedModel, type ScriptedModel } from '@mada/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, startReplicas, type Replicas, type TestApp } from '../support/app.js';
import { TEST_DATABASE_URL } from '../support/databases.js';

/**
 * `GET /approvals/events`: the caller's pending approvals as Server-Sent Events, the whole list on
 * opening and again at each change, over real HTTP on loopback with the scripted model asking.
 */

const KEYS = { ann: 'ann-key-3c9e10b27f44', bob: 'bob-key-8d1a4f6e0c52' };
type User = keyof typeof KEYS;
interface PendingList {
  approvals: { id: string; tool: string; args: Record<string, unknown> }[];
  total: number;
}

/** An open stream: each `data:` frame's list, in order, as it arrives. */
class Feed {
  readonly lists: PendingList[] = [];
  private readonly controller = new AbortController();
  private waiters: (() => void)[] = [];
  readonly opened: Promise<Response>;

  constructor(address: string, key: string) {
    this.opened = fetch(`${address}/approvals/events`, { headers: { 'x-api-key': key }, signal: this.controller.signal });
    void this.read();
  }

  /** The first list (from `from` on) that `accept` takes, within 5 s. */
  async next(accept: (list: PendingList) => boolean, from = 0): Promise<{ list: PendingList; index: number }> {
    const deadline = Date.now() + 5000;
    for (;;) {
      const index = this.lists.findIndex((list, i) => i >= from && accept(list));
      if (index >= 0) return { list: this.lists[index]!, index };
      if (Date.now() > deadline) throw new Error(`no such list among ${JSON.stringify(this.lists)}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 100);
      });
    }
  }

  close(): void {
    this.controller.abort();
  }

  private async read(): Promise<void> {
    try {
      const response = await this.opened;
      const decoder = new TextDecoder();
      let buffer = '';
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith('data: ')) this.lists.push(JSON.parse(block.slice('data: '.length)) as PendingList);
        }
        this.waiters.splice(0).forEach((wake) => wake());
      }
    } catch {
      // Closed by the test.
    }
  }
}

async function askingRun(address: string, model: ScriptedModel, workdir: string, user: User, command: string): Promise<string> {
  model.push(scripted.toolCalls({ name: 'bash', arguments: { command } }), scripted.text('done'));
  const response = await fetch(`${address}/runs`, {
    method: 'POST',
    headers: { 'x-api-key': KEYS[user], 'content-type': 'application/json' },
    body: JSON.stringify({ agent_type: 'task', prompt: 'do it', working_dir: workdir }),
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
}

const answer = (address: string, user: User, id: string, decision: string): Promise<Response> =>
  fetch(`${address}/approvals/${id}`, { method: 'POST', headers: { 'x-api-key': KEYS[user], 'content-type': 'application/json' }, body: JSON.stringify({ decision }) });

const env = { API_KEYS: `ann:${KEYS.ann},bob:${KEYS.bob}`, RATE_LIMIT_PER_MINUTE: '0' };

describe('the pending approvals stream', () => {
  let model: ScriptedModel;
  let t: TestApp;
  let address: string;

  beforeAll(async () => {
    model = await startScriptedModel();
    t = await createTestApp({ model: { url: model.url }, env });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await t?.close();
    await model?.close();
  });

  it("sends the caller's pending list at once, a new approval as it is asked, and its end as it is answered", async () => {
    const ann = new Feed(address, KEYS.ann);
    const bob = new Feed(address, KEYS.bob);
    try {
      const opened = await ann.opened;
      expect(opened.status).toBe(200);
      expect(opened.headers.get('content-type')).toMatch(/^text\/event-stream/);
      expect((await ann.next(() => true)).list).toEqual({ approvals: [], total: 0 });
      await bob.next(() => true);

      const asked = performance.now();
      await askingRun(address, model, t.workdir, 'ann', 'rm nothing.txt');
      const shown = await ann.next((list) => list.total === 1);
      // Told, not found by a poll: the local bus's safety poll is a minute.
      expect(performance.now() - asked).toBeLessThan(3000);
      const approval = shown.list.approvals[0]!;
      expect(approval.tool).toBe('bash');
      expect(approval.args).toEqual({ command: 'rm nothing.txt' });

      expect((await answer(address, 'ann', approval.id, 'deny')).status).toBe(200);
      await ann.next((list) => list.total === 0, shown.index + 1);
      // bob never saw ann's approval.
      expect(bob.lists.every((list) => list.total === 0)).toBe(true);
      // The same list is not sent twice in a row.
      expect(ann.lists.map((list) => list.total)).toEqual([0, 1, 0]);
    } finally {
      ann.close();
      bob.close();
    }
  }, 30_000);

  it('refuses a caller without a key', async () => {
    const response = await fetch(`${address}/approvals/events`);
    expect(response.status).toBe(401);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('the pending approvals stream across replicas on postgres', () => {
  let model: ScriptedModel;
  let replicas: Replicas;

  beforeAll(async () => {
    model = await startScriptedModel();
    replicas = await startReplicas({ ...env, LLM_PROVIDER: 'ollama', LLM_BASE_URL: model.url });
  });
  afterAll(async () => {
    await replicas?.close();
    await model?.close();
  });

  it('tells a stream on one replica of an approval asked and answered on the other', async () => {
    const feed = new Feed(replicas.addressB, KEYS.ann);
    try {
      await feed.next(() => true);
      await askingRun(replicas.addressA, model, replicas.a.workdir, 'ann', 'rm far.txt');
      const shown = await feed.next((list) => list.total === 1);
      const id = shown.list.approvals[0]!.id;
      const answered = performance.now();
      expect((await answer(replicas.addressA, 'ann', id, 'deny')).status).toBe(200);
      await feed.next((list) => list.total === 0, shown.index + 1);
      expect(performance.now() - answered).toBeLessThan(1500);
    } finally {
      feed.close();
    }
  }, 30_000);
});
