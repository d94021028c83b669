import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface CuttingProxy extends TcpProxy {
  /** The request heads of every events request that went through, in order. */
  eventRequests: string[];
}

/**
 * A TCP proxy on loopback in front of the service. The first `cuts` responses to a
 * `GET /runs/.../events` request are cut off (both sockets destroyed) after `bytes` bytes of the
 * answer: a connection that drops mid-stream, as Wi-Fi or a proxy would drop it.
 */
export async function startCuttingProxy(target: string, cuts: number, bytes: number): Promise<CuttingProxy> {
  const eventRequests: string[] = [];
  let cutsLeft = cuts;
  const proxy = await startTcpProxy(target, (client, upstream) => {
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
  });
  return { ...proxy, eventRequests };
}
