import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface CuttingProxy extends TcpProxy {
  /** The request heads of every events request that went through, in order. */
  eventRequests: string[];
}

/**
 * A TCP proxy on loopback in front of the service. The first `cuts` responses to a
 * `GET /runs/.../events` request are cut off (both sockets destroyed) after `bytes` bytes of the
 * answer's body: a connection that drops mid-stream, as Wi-Fi or a proxy would drop it.
 */
export async function startCuttingProxy(target: string, cuts: number, bytes: number): Promise<CuttingProxy> {
  const eventRequests: string[] = [];
  let cutsLeft = cuts;
  const proxy = await startTcpProxy(target, (client, upstream) => {
    let budget = Infinity;
    // The budget counts the stream's body, not its head: the cut must not move with the headers.
    let head: string | undefined;
    client.on('data', (chunk: Buffer) => {
      const text = chunk.toString('latin1');
      if (/^GET \/runs\/[^ ]+\/events/.test(text)) {
        eventRequests.push(text);
        budget = cutsLeft > 0 ? bytes : Infinity;
        head = budget === Infinity ? undefined : '';
        cutsLeft -= 1;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (received: Buffer) => {
      let chunk = received;
      if (head !== undefined) {
        // latin1: one character per byte, so positions in `head` are positions in the bytes.
        head += chunk.toString('latin1');
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) {
          client.write(chunk);
          return;
        }
        const bodyStart = chunk.length - (head.length - end - 4);
        client.write(chunk.subarray(0, bodyStart));
        chunk = chunk.subarray(bodyStart);
        head = undefined;
      }
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
