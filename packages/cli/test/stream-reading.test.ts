import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerResponse } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMada, tempDir } from './support/cli-process.js';
import { conversationBody, frame, messageBody, openSse, sendJson, startPeer, type Peer, type PeerRequest } from './support/peer.js';

const CONVERSATION = randomUUID();
const DONE = {
  event: 'done',
  mode: 'default',
  user_message_id: randomUUID(),
  assistant_message_id: randomUUID(),
  total_tokens: 1234,
  summarized: false,
};

type StreamScript = (write: (text: string) => void, response: ServerResponse) => void;

/** A service that creates conversations and answers each streamed turn with `script`. */
function turnPeer(script: StreamScript): Promise<Peer> {
  return startPeer((request, response) => {
    if (request.method === 'POST' && request.path === '/conversations/') {
      return sendJson(response, 201, conversationBody(CONVERSATION));
    }
    if (request.path === `/conversations/${CONVERSATION}/stream`) return script(openSse(response), response);
    sendJson(response, 404, { detail: 'Not Found' });
  });
}

let home: string;
let peer: Peer | undefined;

beforeEach(() => {
  home = tempDir('mada-cli-home-');
});

afterEach(async () => {
  await peer?.close();
  peer = undefined;
});

const chat = (input: string, args: string[] = []) => runMada(['chat', '-a', peer!.url, ...args], { home, input });

describe('reading a streamed turn', () => {
  it('shows tool progress and the answer, skipping unknown events, invalid JSON and comments', async () => {
    peer = await turnPeer((write, response) => {
      write(': ping\n\n');
      write(frame({ event: 'tool_start', tool: 'read_file', args: { file_path: join(home, 'src', 'app.ts'), offset: 0, limit: 2000 } }));
      write('data: {this is not json\n\n');
      write(frame({ event: 'telemetry', value: 42 }));
      write(frame({ event: 'tool_done', tool: 'read_file', result_summary: '120 lines' }));
      write(frame({ event: 'thinking', message: 'rule ask matched for bash' }));
      write(frame({ event: 'response', text: 'The app ' }));
      write(frame({ event: 'response', text: 'exports **buildApp**.' }));
      write(frame(DONE));
      response.end();
    });
    const result = await chat('what does app.ts export?\nexit\n');
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('→ read_file src/app.ts');
    expect(result.stdout).toContain('✓ read_file: 120 lines');
    expect(result.stdout).toContain('… rule ask matched for bash');
    expect(result.stdout).toContain('The app exports **buildApp**.');
    expect(result.stdout).toContain('(1,234 tokens in this session)');
    expect(result.stdout).not.toContain('telemetry');
  });

  it('sends the prompt and the mode to the streamed-turn route', async () => {
    peer = await turnPeer((write, response) => {
      write(frame(DONE));
      response.end();
    });
    await chat('list the files\nexit\n', ['--mode', 'plan']);
    const turn = peer.requests.find((request) => request.path.endsWith('/stream'));
    expect(turn?.body).toEqual({ content: 'list the files', mode: 'plan' });
  });

  it('stops reading at done even when the server keeps the stream open', async () => {
    peer = await turnPeer((write) => {
      write(frame({ event: 'response', text: 'first answer' }));
      write(frame(DONE));
      write(frame({ event: 'response', text: 'NEVER SHOWN' }));
      // No end(): a client that waited for the close would hang here.
    });
    const started = Date.now();
    const result = await chat('hi\nexit\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('first answer');
    expect(result.stdout).not.toContain('NEVER SHOWN');
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('stops at an error event, shows it as one line and keeps the chat going', async () => {
    let turns = 0;
    peer = await turnPeer((write, response) => {
      turns += 1;
      if (turns === 1) {
        write(frame({ event: 'response', text: 'partial' }));
        write(frame({ event: 'error', error_message: 'model runtime unreachable' }));
        write(frame({ event: 'response', text: 'NEVER SHOWN' }));
      } else {
        write(frame({ event: 'response', text: 'second turn worked' }));
        write(frame(DONE));
      }
      response.end();
    });
    const result = await chat('one\ntwo\nexit\n');
    expect(result.stderr).toBe('mada: The run failed: model runtime unreachable\n');
    expect(result.stdout).toContain('partial');
    expect(result.stdout).not.toContain('NEVER SHOWN');
    expect(result.stdout).toContain('second turn worked');
    // Piped input: a failed turn makes the exit status say so.
    expect(result.code).toBe(1);
  });

  it('understands the legacy error frame that carries its text in data', async () => {
    peer = await turnPeer((write, response) => {
      write(frame({ event: 'error', data: 'old style failure' }));
      response.end();
    });
    const result = await chat('hi\n');
    expect(result.stderr).toContain('The run failed: old style failure');
  });

  it('skips a frame of a known kind that lacks its fields instead of inventing them', async () => {
    peer = await turnPeer((write, response) => {
      write(frame({ event: 'tool_start', tool: 'bash' }));
      write(frame({ event: 'tool_done', result_summary: 'orphan summary' }));
      write(frame({ event: 'response', text: 'all good' }));
      write(frame(DONE));
      response.end();
    });
    const result = await chat('hi\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('all good');
    expect(result.stdout).not.toContain('→ bash');
    expect(result.stdout).not.toContain('orphan summary');
  });

  it('reports a stream that closes before done or error, with what arrived', async () => {
    peer = await turnPeer((write, response) => {
      write(frame({ event: 'tool_start', tool: 'bash', args: { command: 'npm test' } }));
      write(frame({ event: 'response', text: 'half an ans' }));
      response.end();
    });
    const result = await chat('run the tests\n');
    expect(result.stdout).toContain('→ bash npm test');
    expect(result.stdout).toContain('half an ans');
    expect(result.stderr).toMatch(/^mada: The stream ended before the run finished; the reply may be incomplete/);
    expect(result.code).toBe(1);
  });

  it('takes a last frame that the connection closing cut off before its blank line', async () => {
    peer = await turnPeer((write, response) => {
      write(frame({ event: 'response', text: 'complete answer' }));
      write(`data: ${JSON.stringify(DONE)}`);
      response.end();
    });
    const result = await chat('hi\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('complete answer');
  });

  it('joins text split across network chunks mid-frame and mid-character', async () => {
    peer = await turnPeer((_write, response) => {
      const bytes = Buffer.from(frame({ event: 'response', text: 'naïve café ☕' }) + frame(DONE));
      for (let i = 0; i < bytes.length; i += 7) response.write(bytes.subarray(i, i + 7));
      response.end();
    });
    const result = await chat('hi\n');
    expect(result.stdout).toContain('naïve café ☕');
  });
});

describe('stream timeouts', () => {
  function configWith(lines: string): void {
    mkdirSync(join(home, '.mada'), { recursive: true });
    writeFileSync(join(home, '.mada', 'config.toml'), lines);
  }

  it('gives up on a stream that goes silent longer than api.stream_timeout', async () => {
    configWith('[api]\nstream_timeout = 1\n');
    peer = await turnPeer((write) => write(frame({ event: 'tool_start', tool: 'bash', args: { command: 'sleep 600' } })));
    const result = await chat('hi\n');
    expect(result.stderr).toBe('mada: The service went silent for 1 s; gave up; api.stream_timeout sets the limit\n');
  });

  it('keeps a stream alive while ping comments arrive', async () => {
    configWith('[api]\nstream_timeout = 1\n');
    peer = await turnPeer((write, response) => {
      let pings = 0;
      const timer = setInterval(() => {
        pings += 1;
        if (pings < 5) return write(': ping\n\n');
        clearInterval(timer);
        write(frame({ event: 'response', text: 'slow but alive' }) + frame(DONE));
        response.end();
      }, 400);
    });
    const result = await chat('hi\n');
    expect(result.stdout).toContain('slow but alive');
    expect(result.code).toBe(0);
  });

  it('gives up when the service does not answer within api.connect_timeout', async () => {
    configWith('[api]\nconnect_timeout = 1\n');
    peer = await startPeer(() => undefined);
    const result = await runMada(['status', '-a', peer.url], { home });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^mada: No answer from http:\/\/127\.0\.0\.1:\d+ within 1 s; check api\.url/);
  });
});

describe('a service without streamed turns', () => {
  /** Answers like an older server: no /conversations/{id}/stream, SPEC.md's /agents/stream and /save. */
  function olderService(): Promise<Peer> {
    return startPeer((request: PeerRequest, response) => {
      if (request.method === 'POST' && request.path === '/conversations/') return sendJson(response, 201, conversationBody(CONVERSATION));
      if (request.path === '/agents/stream') {
        const write = openSse(response);
        write(frame({ event: 'tool_start', tool: 'glob_files', args: { pattern: '**/*.ts', path: '/tmp' } }));
        write(frame({ event: 'tool_done', tool: 'glob_files', result_summary: '12 lines' }));
        write(frame({ event: 'chunk', data: 'There are ' }));
        write(frame({ event: 'response', text: 'twelve files.' }));
        write(frame({ event: 'done', mode: 'default' }));
        return response.end();
      }
      if (request.path === `/conversations/${CONVERSATION}/save`) {
        return sendJson(response, 200, {
          user_message: messageBody(randomUUID(), 'user', 'x'),
          assistant_message: messageBody(randomUUID(), 'assistant', 'y'),
          total_tokens: 42,
        });
      }
      sendJson(response, 404, { detail: 'Not Found' });
    });
  }

  it('falls back to /agents/stream, then stores the buffered reply with /save', async () => {
    peer = await olderService();
    const result = await chat('how many ts files?\nand now?\nexit\n', ['--agent', 'explore', '--mode', 'plan']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('There are twelve files.');
    expect(result.stdout).toContain('✓ glob_files: 12 lines');
    expect(result.stderr).toContain('no streamed turns');
    const paths = peer.requests.map((request) => `${request.method} ${request.path}`);
    // The missing route is tried once; later turns go straight to the fallback.
    expect(paths.filter((path) => path.endsWith('/stream') && path.includes('/conversations/'))).toHaveLength(1);
    expect(paths.filter((path) => path === 'POST /agents/stream')).toHaveLength(2);
    const run = peer.requests.find((request) => request.path === '/agents/stream');
    expect(run?.body).toEqual({ agent_type: 'explore', prompt: 'how many ts files?', working_dir: home, mode: 'plan' });
    const saves = peer.requests.filter((request) => request.path.endsWith('/save')).map((request) => request.body);
    expect(saves).toEqual([
      { user_content: 'how many ts files?', assistant_content: 'There are twelve files.' },
      { user_content: 'and now?', assistant_content: 'There are twelve files.' },
    ]);
  });

  it('does not fall back when the conversation itself is missing', async () => {
    peer = await startPeer((request, response) => {
      if (request.path === '/conversations/') return sendJson(response, 201, conversationBody(CONVERSATION));
      sendJson(response, 404, { detail: 'Conversation not found' });
    });
    const result = await chat('hi\n');
    expect(result.stderr).toMatch(/^mada: Session not found \(404\); it may have expired/);
    expect(peer.requests.some((request) => request.path === '/agents/stream')).toBe(false);
  });
});

describe('a chat turn over stored runs', () => {
  const RUN = randomUUID();
  const runBody = (): Record<string, unknown> => ({
    id: RUN,
    agent_type: 'task',
    mode: 'default',
    status: 'running',
    prompt: 'hi',
    working_dir: '/tmp',
    conversation_id: CONVERSATION,
    response: null,
    error: null,
    created_at: '2026-01-01T00:00:00.000Z',
    started_at: '2026-01-01T00:00:00.000Z',
    ended_at: null,
    usage: { model_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0 },
    last_event_id: 0,
  });
  const numbered = (id: number, value: object): string => `id: ${id}\n${frame(value)}`;

  it('reattaches after a dropped connection with Last-Event-ID and shows each frame once', async () => {
    let connections = 0;
    peer = await startPeer((request, response) => {
      if (request.method === 'POST' && request.path === '/conversations/') return sendJson(response, 201, conversationBody(CONVERSATION));
      if (request.path === `/conversations/${CONVERSATION}/runs`) return sendJson(response, 202, runBody());
      if (request.path !== `/runs/${RUN}/events`) return sendJson(response, 404, { detail: 'Not Found' });
      connections += 1;
      const write = openSse(response);
      if (connections === 1) {
        write(numbered(1, { event: 'tool_start', tool: 'bash', args: { command: 'ls' } }));
        write(numbered(2, { event: 'response', text: 'Hello ' }));
        // The connection drops in the middle of the third frame.
        write('id: 3\ndata: {"event": "resp');
        return setTimeout(() => response.destroy(), 50);
      }
      // A server that replays one frame too many: the client still shows it once.
      write(numbered(2, { event: 'response', text: 'Hello ' }));
      write(numbered(3, { event: 'response', text: 'world.' }));
      write(numbered(4, DONE));
      response.end();
    });
    const result = await chat('hi\nexit\n');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Hello world.\n');
    expect(result.stdout.match(/→ bash ls/g)).toHaveLength(1);
    expect(result.stderr).toBe('The connection dropped; reattaching to the run…\n');
    const events = peer.requests.filter((request) => request.path === `/runs/${RUN}/events`);
    expect(events.map((request) => request.headers['last-event-id'])).toEqual([undefined, '2']);
    expect(peer.requests.find((request) => request.path.endsWith('/runs'))?.body).toEqual({ content: 'hi', mode: 'default' });
    // The older streamed-turn route is not used when runs exist.
    expect(peer.requests.some((request) => request.path.endsWith('/stream'))).toBe(false);
  });

  it('falls back to the streamed-turn route once when the service has no conversation runs', async () => {
    peer = await turnPeer((write, response) => {
      write(frame({ event: 'response', text: 'old route answer' }));
      write(frame(DONE));
      response.end();
    });
    const result = await chat('one\ntwo\nexit\n');
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(result.stdout.match(/old route answer/g)).toHaveLength(2);
    expect(peer.requests.filter((request) => request.path.endsWith('/runs'))).toHaveLength(1);
  });
});
