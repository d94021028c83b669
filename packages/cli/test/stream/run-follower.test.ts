import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiClient } from '../../src/api/client.js';
import { ApiError, ReattachFailedError } from '../../src/api/errors.js';
import { followRun } from '../../src/stream/run-follower.js';
import { frame, openSse, sendJson, startPeer, type Peer } from '../support/peer.js';

const RUN = randomUUID();
let peer: Peer | undefined;

afterEach(async () => {
  await peer?.close();
  peer = undefined;
});

const clientOf = (url: string): ApiClient => new ApiClient({ baseUrl: url, connectTimeoutMs: 5000, streamTimeoutMs: 5000 });
const numbered = (id: number, value: object): string => `id: ${id}\n${frame(value)}`;

async function collect(url: string, delaysMs: number[]): Promise<{ ids: (number | undefined)[]; error: unknown }> {
  const ids: (number | undefined)[] = [];
  try {
    for await (const event of followRun(clientOf(url), RUN, { delaysMs })) ids.push(event.id);
    return { ids, error: undefined };
  } catch (error) {
    return { ids, error };
  }
}

const eventRequests = (): number => peer!.requests.filter((request) => request.path === `/runs/${RUN}/events`).length;

describe('following a run', () => {
  it('gives up after the last delay when reattaching brings nothing, and says which run', async () => {
    peer = await startPeer((_request, response) => {
      openSse(response);
      response.end();
    });
    const { ids, error } = await collect(peer.url, [1, 1, 1]);
    expect(ids).toEqual([]);
    expect(error).toBeInstanceOf(ReattachFailedError);
    expect((error as ReattachFailedError).runId).toBe(RUN);
    // The first read and one reattach per delay.
    expect(eventRequests()).toBe(4);
  });

  it('starts counting again after an attempt that brings a new frame', async () => {
    let connection = 0;
    peer = await startPeer((_request, response) => {
      connection += 1;
      const write = openSse(response);
      // Every other connection brings one frame; the others bring nothing.
      if (connection % 2 === 0 && connection < 8) write(numbered(connection / 2, { event: 'thinking', message: `step ${connection}` }));
      if (connection === 8) write(numbered(4, { event: 'done', mode: 'default' }));
      response.end();
    });
    const { ids, error } = await collect(peer.url, [1, 1]);
    expect(error).toBeUndefined();
    expect(ids).toEqual([1, 2, 3, 4]);
  });

  it('does not retry what a new connection cannot cure: a 404 ends at once', async () => {
    peer = await startPeer((_request, response) => sendJson(response, 404, { detail: 'Run not found' }));
    const { error } = await collect(peer.url, [1, 1, 1]);
    expect(error).toBeInstanceOf(ApiError);
    expect(eventRequests()).toBe(1);
  });
});
