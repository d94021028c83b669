import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { ACCEPTORS, listenWithAcceptors } from '../../src/http/acceptors.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { send } from '../support/raw-http.js';

/** The inodes of the listening TCP sockets on 127.0.0.1:`port`, from the kernel's own table. */
function listenersOn(port: number): string[] {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter(([, address, , state]) => address === local && state === '0A')
    .map((fields) => fields[9] ?? '');
}

/** This process's descriptors that lead to the socket with this inode. */
function descriptorsOf(inode: string): string[] {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === `socket:[${inode}]`;
    } catch {
      return false; // closed since the listing
    }
  });
}

/** Whether a descriptor closes when this process starts another program (O_CLOEXEC in its flags). */
function closesOnExec(fd: string): boolean {
  const flags = /^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1] ?? '0';
  return (parseInt(flags, 8) & 0o2000000) !== 0;
}

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host: '127.0.0.1', port }, () => probe.close(() => resolve(true)));
  });

describe('listening with several accepting sockets', () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('serves a burst of new connections on every socket, and frees the port when closed', async () => {
    t = await createTestApp();
    await listenWithAcceptors(t.app, { host: '127.0.0.1', port: 0 });
    const [address] = t.app.addresses();
    const port = typeof address === 'object' ? address.port : 0;
    // One socket, which no other process joined, watched through ACCEPTORS descriptors.
    const sockets = listenersOn(port);
    expect(sockets).toHaveLength(1);
    const descriptors = descriptorsOf(sockets[0] ?? '');
    expect(descriptors).toHaveLength(ACCEPTORS);
    // No tool's process may inherit one: it could accept the service's clients, keys and all.
    expect(descriptors.filter((fd) => !closesOnExec(fd))).toEqual([]);

    // A socket names the net.Server that accepted it until the HTTP server's own listener, which
    // comes later, renames it.
    const acceptedBy = new Set<unknown>();
    t.app.server.prependListener('connection', (socket: Socket & { server?: unknown }) => acceptedBy.add(socket.server));
    const base = `http://127.0.0.1:${port}`;
    const answers = await Promise.all(Array.from({ length: 200 }, () => send(base, { path: '/health' })));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
    // The app's own hooks ran for connections from every socket: its headers are on each answer.
    expect(answers.every((answer) => answer.headers['x-frame-options'] === 'DENY')).toBe(true);
    // The copies accepted some of the burst themselves: a turn of the event loop took more than one.
    expect(acceptedBy.size).toBeGreaterThan(1);
    expect(acceptedBy.size).toBeLessThanOrEqual(ACCEPTORS);

    await t.close();
    t = undefined;
    expect(listenersOn(port)).toEqual([]);
    expect(await bindable(port)).toBe(true);
  });

  it('goes on accepting through the one descriptor when its copies cannot be made, and says so', async () => {
    const lines: { level: number; msg: string }[] = [];
    t = await createTestApp({ logger: pino({ level: 'warn' }, { write: (text: string) => void lines.push(JSON.parse(text) as { level: number; msg: string }) }) });
    await listenWithAcceptors(t.app, { host: '127.0.0.1', port: 0 }, { node: '/nonexistent/node' });
    const [address] = t.app.addresses();
    const port = typeof address === 'object' ? address.port : 0;
    const sockets = listenersOn(port);
    expect(sockets).toHaveLength(1);
    expect(descriptorsOf(sockets[0] ?? '')).toHaveLength(1);
    expect(lines).toContainEqual(expect.objectContaining({ level: 40, msg: 'accepting through one descriptor: its copies could not be made' }));
    const answers = await Promise.all(Array.from({ length: 20 }, () => send(`http://127.0.0.1:${port}`, { path: '/health' })));
    expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 200));
  });

  it('refuses a port another process of the same user already listens on, even one offering to share it', async () => {
    // What a second service started on the same port meets: joining the first one's socket would
    // split the connections between the two without a word. (`reusePort` is ignored before Node 22.12.)
    const first = createServer();
    const sharing: Parameters<typeof first.listen>[0] & { reusePort?: boolean } = { host: '127.0.0.1', port: 0, reusePort: true };
    await new Promise<void>((resolve) => first.listen(sharing, () => resolve()));
    const taken = (first.address() as { port: number }).port;
    try {
      t = await createTestApp();
      await expect(listenWithAcceptors(t.app, { host: '127.0.0.1', port: taken })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      expect(listenersOn(taken)).toHaveLength(1);
    } finally {
      await new Promise<void>((resolve) => first.close(() => resolve()));
    }
  });
});
