import { spawn } from 'node:child_process';
import { Server, type Server as NetServer, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/** Descriptors of the listening socket the event loop watches: the server's own and its copies. */
export const ACCEPTORS = 8;

/** How long start-up waits for the copies before going on with the one descriptor. */
const COPY_TIMEOUT_MS = 10_000;

/**
 * The helper process's whole program: it receives the listening socket once and sends it back
 * `copies` times. Each passing (SCM_RIGHTS) gives the receiver a new descriptor of the same socket;
 * Node has no dup() of its own. It passes the bare handle, not a net.Server: a net.Server that
 * arrives starts listening, and the helper would then accept (and strand) clients of the service.
 * Its own descriptor is closed before it leaves, so it holds nothing open once it exits. It stays
 * subscribed to messages until then: without a listener the channel no longer keeps it alive, and
 * it exited with copies still queued.
 */
const COPIER = `process.on('message', ({ copies }, handle) => {
  const next = () => {
    if (copies-- === 0) { handle.close(); process.disconnect(); return; }
    process.send('copy', handle, {}, next);
  };
  next();
});`;

/**
 * Listens on `host:port`, then has the event loop watch the listening socket through ACCEPTORS
 * descriptors where the platform passes sockets between processes (not Windows).
 *
 * libuv (1.45 on) accepts one connection per watched descriptor per turn of the event loop. While
 * many runs stream, a turn lasts tens of milliseconds, so a burst of new clients waited in the
 * kernel's queue for seconds. With several descriptors of the one socket, each turn accepts one
 * through each. It is still one socket with one queue: no other process can join the port
 * (SO_REUSEPORT would let one of the same user take a share of the connections), and it works on
 * every Node version. Connections from every descriptor go to the same HTTP server, so its
 * connection limits and timeouts apply. If the copies cannot be made, the service goes on with one.
 * `node` is the program that makes them (this process's own Node unless given).
 */
export async function listenWithAcceptors(
  app: FastifyInstance,
  where: { host: string; port: number },
  options: { node?: string } = {},
): Promise<void> {
  const copies: NetServer[] = [];
  const handedOn = new Set<Socket>();
  // Only the copies close here. A net.Server's own close waits for every connection it accepted
  // to end, and those belong to the HTTP server, which ends them after this hook.
  app.addHook('preClose', async () => {
    for (const copy of copies) copy.close();
  });
  // The HTTP server counts only the connections its own descriptor accepted: its close reported
  // done (and the process exited) while requests that came through the copies were in flight.
  app.addHook('onClose', async () => {
    app.server.closeIdleConnections();
    await Promise.all([...handedOn].map((socket) => new Promise((resolve) => (socket.closed ? resolve(undefined) : socket.once('close', resolve)))));
  });
  await app.listen(where);
  if (process.platform === 'win32') return;
  const handOn = (socket: Socket): void => {
    handedOn.add(socket);
    socket.once('close', () => handedOn.delete(socket));
    app.server.emit('connection', socket);
  };
  try {
    copies.push(...(await copiesOf(app.server, ACCEPTORS - 1, handOn, options.node ?? process.execPath)));
  } catch (error) {
    app.log.warn({ err: error }, 'accepting through one descriptor: its copies could not be made');
  }
}

/**
 * `count` more descriptors of `server`'s listening socket, each a listening net.Server of its own
 * whose connections go to `onConnection`. A short-lived Node process makes them: it gets the socket
 * and passes it back `count` times. It runs with an empty environment and none of the service's
 * Node options.
 */
function copiesOf(server: NetServer, count: number, onConnection: (socket: Socket) => void, node: string): Promise<NetServer[]> {
  // Taken before the helper starts: a helper left waiting for a handle would stay until the service exits.
  const handle = bareHandle(server);
  return new Promise((resolve, reject) => {
    const copier = spawn(node, ['-e', COPIER], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env: {} });
    const copies: NetServer[] = [];
    let ended: string | undefined;
    let settled = false;
    const settle = (error?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (!error) return resolve(copies);
      copier.kill('SIGKILL');
      for (const copy of copies) copy.close();
      reject(error);
    };
    // Both the last copy and the helper's exit: the exit can be seen before the last message is read.
    const check = (): void => {
      if (copies.length === count && ended !== undefined) settle();
      else if (ended !== undefined) settle(new Error(`the copying process ended (${ended}) after ${copies.length} of ${count} copies`));
    };
    const timer = setTimeout(() => settle(new Error(`no copies within ${COPY_TIMEOUT_MS} ms`)), COPY_TIMEOUT_MS);
    copier.on('error', settle);
    copier.on('message', (_message, copy) => {
      if (copy === undefined) return;
      // Its connections have somewhere to go before it listens.
      copies.push(new Server().on('connection', onConnection).listen(copy));
      if (copies.length === count) check();
    });
    copier.on('exit', (code, signal) => {
      ended = signal ?? `exit ${code}`;
      // Messages already read are delivered first; one still in the pipe arrives within a turn.
      setImmediate(check);
    });
    copier.send({ copies: count }, handle);
  });
}

/**
 * The listening socket's own handle under `server` (Node's `_handle`). Node passes such a handle to
 * another process as it is, where a net.Server would be made to listen there on arrival. Node's
 * types know only the wrappers, hence the cast.
 */
function bareHandle(server: NetServer): NetServer {
  const handle = (server as unknown as { _handle: unknown })._handle;
  if (handle === null || typeof handle !== 'object') throw new Error('the server is not listening');
  return handle as NetServer;
}
