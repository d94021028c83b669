import { createServer, type ListenOptions, type Server as NetServer, type Socket } from 'node:net';
import type { FastifyInstance, FastifyListenOptions } from 'fastify';

/** Listening sockets per address where several can share the port. */
export const ACCEPTORS = 8;

/** `reusePort` of net.Server.listen (Node 22.12 and 23.1 on), which the type packages of Node 20 do not know. */
type SharedPortOptions = { reusePort?: boolean };

/**
 * Whether this runtime can open several listening sockets on one port (SO_REUSEPORT through
 * `reusePort`): Node 22.12+ or 23.1+, on Linux, where the kernel spreads new connections over them.
 */
export function sharesPorts(platform: string = process.platform, version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const nodeCan = major > 23 || (major === 23 && minor >= 1) || (major === 22 && minor >= 12);
  return platform === 'linux' && nodeCan;
}

/**
 * Listens on `host:port` with ACCEPTORS sockets per address where the runtime allows it, else one.
 *
 * libuv (1.45 on) accepts one connection per listening socket per turn of the event loop. While
 * many runs stream, a turn lasts tens of milliseconds, so a burst of new clients waited in the
 * kernel's queue for seconds. With several sockets, each turn accepts one from each. Connections
 * from every socket go to the same HTTP server (its connection limits and timeouts apply). Only
 * processes of the service's own user may join a shared port, and those can read its data anyway.
 * The extra sockets stop listening before the server closes (`preClose`), so shutdown stops them too.
 */
export async function listenWithAcceptors(app: FastifyInstance, where: { host: string; port: number }): Promise<void> {
  if (!sharesPorts()) {
    await app.listen(where);
    return;
  }
  const extra: NetServer[] = [];
  const handedOn = new Set<Socket>();
  // Only the listening sockets close here. A net.Server's own close waits for every connection it
  // accepted to end, and those belong to the HTTP server, which ends them after this hook.
  app.addHook('preClose', async () => {
    for (const server of extra) server.close();
  });
  // The HTTP server counts only the connections its own socket accepted: its close reported done
  // (and the process exited) while requests that came through the other sockets were in flight.
  app.addHook('onClose', async () => {
    app.server.closeIdleConnections();
    await Promise.all([...handedOn].map((socket) => new Promise((resolve) => (socket.closed ? resolve(undefined) : socket.once('close', resolve)))));
  });
  const shared: FastifyListenOptions & SharedPortOptions = { host: where.host, port: await claimPort(where), reusePort: true };
  await app.listen(shared);
  for (const address of app.addresses()) {
    if (typeof address === 'string') continue;
    for (let i = 1; i < ACCEPTORS; i++) extra.push(await acceptInto(app, address.address, address.port, handedOn));
  }
}

/**
 * The port, checked free with a plain socket first: a second service of the same user started on
 * the same port would otherwise join the first one's sockets and silently take a share of its
 * connections, where one socket alone fails with EADDRINUSE. Port 0 becomes the port the kernel
 * picked for the check.
 */
async function claimPort(where: { host: string; port: number }): Promise<number> {
  const probe = await listening(createServer(), { host: where.host, port: where.port, exclusive: true });
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return typeof address === 'object' && address !== null ? address.port : where.port;
}

/** One more socket on the same address and port, handing what it accepts to the app's server. */
function acceptInto(app: FastifyInstance, host: string, port: number, handedOn: Set<Socket>): Promise<NetServer> {
  const server = createServer((socket) => {
    handedOn.add(socket);
    socket.once('close', () => handedOn.delete(socket));
    app.server.emit('connection', socket);
  });
  return listening(server, { host, port, reusePort: true });
}

/** `server` once it listens; rejects with the bind's error (EADDRINUSE). */
function listening(server: NetServer, options: ListenOptions & SharedPortOptions): Promise<NetServer> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve(server);
    });
  });
}
