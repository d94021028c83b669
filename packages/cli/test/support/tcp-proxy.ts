import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface TcpProxy {
  url: string;
  close(): Promise<void>;
}

/**
 * A TCP proxy on loopback in front of `target`. `pipe` decides what passes between each client
 * and its upstream connection; either side closing closes both.
 */
export async function startTcpProxy(target: string, pipe: (client: Socket, upstream: Socket) => void): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
    pipe(client, upstream);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
