import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCEPTORS, listenWithAcceptors, sharesPorts } from '../../src/http/acceptors.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { send } from '../support/raw-http.js';

/** Listening TCP sockets on 127.0.0.1:`port`, from the kernel's own table. */
function listenersOn(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter((line) => {
      const [, address, , state] = line.trim().split(/\s+/);
      return address === local && state === '0A';
    }).length;
}

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host: '127.0.0.1', port }, () => probe.close(() => resolve(true)));
  });

describe('runtimes that can share a port', () => {
  it.each([
    ['linux', '20.19.5', false],
    ['linux', '22.11.0', false],
    ['linux', '22.12.0', true],
    ['linux', '23.0.0', false],
    ['linux', '23.1.0', true],
    ['linux', '24.18.1', true],
    ['darwin', '24.18.1', false],
  ] as const)('%s with Node %s: %s', (platform, version, expected) => {
    expect(sharesPorts(platform, version)).toBe(expected);
  });
});

describe('listening with several accepting sockets', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it(`serves a burst of new connections on every socket, and frees the port when closed (Node ${process.versions.node})`, async () => {
    t = await createTestApp();
    await listenWithAcceptors(t.app, { host: '127.0.0.1', port: 0 });
    const [address] = t.app.addresses();
    const port = typeof address === 'object' ? address.port : 0;
    // Where the runtime cannot share a port, one socket as before.
    expect(listenersOn(port)).toBe(sharesPorts() ? ACCEPTORS : 1);

    const base = `http://127.0.0.1:${port}`;
    const answers = await Promise.all(Array.from({ length: 200 }, () => send(base, { path: '/health' })));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    // The app's own hooks ran for connections from every socket: its headers are on each answer.
    expect(answers.every((answer) => answer.headers['x-frame-options'] === 'DENY')).toBe(true);

    await t.close();
    t = undefined;
    expect(listenersOn(port)).toBe(0);
    expect(await bindable(port)).toBe(true);
  });

  it('refuses a port another process of the same user already listens on, even one sharing it', async () => {
    // What a second service started on the same port meets: on a runtime that can share ports,
    // joining the first one's sockets would split the connections between the two without a word.
    const first = createServer();
    const sharing: Parameters<typeof first.listen>[0] & { reusePort?: boolean } = { host: '127.0.0.1', port: 0, reusePort: sharesPorts() };
    await new Promise<void>((resolve) => first.listen(sharing, () => resolve()));
    const taken = (first.address() as { port: number }).port;
    try {
      t = await createTestApp();
      await expect(listenWithAcceptors(t.app, { host: '127.0.0.1', port: taken })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(listenersOn(taken)).toBe(1);
    } finally {
      await new Promise<void>((resolve) => first.close(() => resolve()));
    }
  });
});
