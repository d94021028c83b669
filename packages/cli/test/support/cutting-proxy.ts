import { once } from 'node:events';
import { createServer, connect, type AddressInfo, type Socket } from 'node:net';

export interface CuttingProxy {
  url: string;
  /** The request heads of every events request that went through, in order. */
  eventRequests: string[];
  close(): Promise<void>;
}

/**
 * A TCP proxy on loopback in front of the service. The first `cuts` responses to a
 * `GET /runs/.../events` request are cut off (both sockets destroyed) after `bytes` bytes of the
 * answer: a connection that drops mid-stream, as Wi-Fi or a proxy would drop it.
 */
export async function startCuttingProxy(target: string, cuts: number, bytes: number): Promise<CuttingProxy> {
  const { hostname, port } = new URL(target);
  const eventRequests: string[] = [];
  const sockets = new Set<Socket>();
  let cutsLeft = cuts;
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    let budget = Infinity;
    client.on('data', (chunk: Buffer) => {
      const head = chunk.toString('latin1');
      if (/^GET \/runs\/[^ ]+\/events/.test(head)) {
        eventRequests.push(head);
        budget = cutsLeft > 0 ? bytes : Infinity;
        cutsLeft -= 1;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (chunk.length < budget) {
        budget -= chunk.length;
        client.write(chunk);
        return;
      }
      client.write(chunk.subarray(0, budget), () => {
        client.destroy();
        upstream.destroy();
      });
      budget = 0;
    });
    const end = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    eventRequests,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}
