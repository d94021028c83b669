import { startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface HoldingProxy extends TcpProxy {
  /** Resolves once the service has answered the held request (an answer the client never sees). */
  answered: Promise<void>;
}

/**
 * A TCP proxy on loopback in front of the service that passes the first request whose head
 * matches `held` through but keeps its answer from the client, as a connection lost after the
 * request arrived would. Every other request passes both ways.
 */
export async function startHoldingProxy(target: string, held: RegExp): Promise<HoldingProxy> {
  let holding = true;
  let markAnswered: () => void = () => undefined;
  const answered = new Promise<void>((resolve) => (markAnswered = resolve));
  const proxy = await startTcpProxy(target, (client, upstream) => {
    let hold = false;
    client.on('data', (chunk: Buffer) => {
      if (holding && held.test(chunk.toString('latin1'))) {
        holding = false;
        hold = true;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (hold) markAnswered();
      else client.write(chunk);
    });
  });
  return { ...proxy, answered };
}
