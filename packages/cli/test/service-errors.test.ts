import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { conversationBody, sendJson, startPeer, type Peer } from './support/peer.js';

const CONVERSATION = randomUUID();

let home: string;
let peer: Peer | undefined;

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

afterEach(async () => {
  await peer?.close();
  peer = undefined;
});

/** A service whose turns all fail with `status` and `body` (and `headers`). */
async function failingTurns(status: number, body: unknown, headers: Record<string, string> = {}): Promise<Peer> {
  return startPeer((request, response) => {
    if (request.path === '/conversations/') return sendJson(response, 201, conversationBody(CONVERSATION));
    for (const [name, value] of Object.entries(headers)) response.setHeader(name, value);
    sendJson(response, status, body);
  });
}

describe('service errors become one line with a hint', () => {
  it.each([
    [409, { detail: 'Conversation is busy' }, {}, 'mada: The session is busy (409 Conversation is busy); another turn is still running in it; wait for it to finish\n'],
    [
      422,
      { detail: [{ loc: ['body', 'content'], msg: 'Too small: expected string to have >=1 characters', type: 'too_small' }] },
      {},
      'mada: The service refused the request (422 content: Too small: expected string to have >=1 characters); the client and the service may disagree on versions: `mada status`\n',
    ],
    [
      429,
      { detail: 'Rate limit exceeded: 120 requests per minute. Retry in 30 seconds.' },
      { 'retry-after': '30' },
      'mada: Too many requests (429 Rate limit exceeded: 120 requests per minute. Retry in 30 seconds.); retry in 30 s; the limit is RATE_LIMIT_PER_MINUTE on the service\n',
    ],
    [500, { detail: 'Internal Server Error' }, {}, 'mada: The service failed (500 Internal Server Error); the service log has the details\n'],
    [502, '<html>Bad Gateway</html>', {}, 'mada: The service failed (502 Bad Gateway); the service log has the details\n'],
  ])('%i during a turn', async (status, body, headers, line) => {
    peer = await failingTurns(status, body, headers);
    const result = await runMada(['chat', '-a', peer.url], { home, input: 'hi\nexit\n' });
    expect(result.stderr).toBe(line);
    expect(result.stdout).toContain('Resume with:');
  });

  it('something that is not a mada service', async () => {
    peer = await startPeer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>welcome to nginx</html>');
    });
    const result = await runMada(['status', '-a', peer.url], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`mada: Unexpected answer from ${peer.url}/; is this a mada service? check api.url in ~/.mada/config.toml, MADA_API_URL or -a/--api\n`);
  });

  it('a 404 for a route the server does not have', async () => {
    peer = await startPeer((_request, response) => sendJson(response, 404, { detail: 'Not Found' }));
    const result = await runMada(['sessions', '-a', peer.url], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `mada: Not found: ${peer.url}/conversations/?limit=20&offset=0 (404 Not Found); is this a mada service? check api.url in ~/.mada/config.toml, MADA_API_URL or -a/--api\n`,
    );
  });
});
