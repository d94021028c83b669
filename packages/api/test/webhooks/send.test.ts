import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { isPublicAddress } from '../../src/webhooks/addresses.js';
import { HostResolver } from '../../src/webhooks/host-resolver.js';
import { MAX_RESPONSE_BYTES, sendDelivery } from '../../src/webhooks/send.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A loopback server; `handle` answers each request. Returns its base URL and what it was sent. */
async function serve(handle: Parameters<typeof createServer>[1]): Promise<{ url: string; hits: string[] }> {
  const hits: string[] = [];
  const server = createServer((request, response) => {
    hits.push(request.url ?? '');
    handle!(request, response);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, hits };
}

const delivery = (url: string) => ({ id: 'd-1', event: 'run_ended', url, secret: 'a-secret-of-sixteen+', body: '{"event":"run_ended"}' });
const resolver = new HostResolver();
const allow = { allowPrivate: true, userAgent: 'mada/test', resolver };

describe('sending one delivery', () => {
  it('signs the exact body with the secret', async () => {
    let seen: { signature: string | undefined; body: string } | undefined;
    const { url } = await serve((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        seen = { signature: request.headers['x-mada-signature'] as string | undefined, body: Buffer.concat(chunks).toString() };
        response.end();
      });
    });
    expect(await sendDelivery(delivery(`${url}/in`), allow)).toEqual({ delivered: true, statusCode: 200, error: null });
    expect(seen).toEqual({ body: '{"event":"run_ended"}', signature: `sha256=${createHmac('sha256', 'a-secret-of-sixteen+').update('{"event":"run_ended"}').digest('hex')}` });
  });

  it('does not follow a redirect, to a private address or anywhere else', async () => {
    const target = await serve((_request, response) => response.end());
    const redirecting = await serve((_request, response) => response.writeHead(307, { location: `${target.url}/elsewhere` }).end());
    expect(await sendDelivery(delivery(`${redirecting.url}/in`), allow)).toEqual({ delivered: false, statusCode: 307, error: null });
    expect(target.hits).toEqual([]);
  });

  it("stops reading a receiver's endless answer after 64 KiB", async () => {
    let written = 0;
    const { url } = await serve((_request, response) => {
      response.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 'x');
      // Writes for as long as anyone reads: a body without end.
      const more = (): void => {
        while (!response.destroyed && response.write(chunk)) written += chunk.length;
        if (!response.destroyed) response.once('drain', more);
      };
      more();
    });
    expect(await sendDelivery(delivery(`${url}/in`), allow)).toEqual({ delivered: true, statusCode: 200, error: null });
    expect(written).toBeLessThan(MAX_RESPONSE_BYTES * 64);
  });

  it('refuses a private address at sending time without the setting, and connects nowhere', async () => {
    const { url, hits } = await serve((_request, response) => response.end());
    const port = new URL(url).port;
    for (const host of ['127.0.0.1', 'localhost', '[::ffff:127.0.0.1]']) {
      expect(await sendDelivery(delivery(`http://${host}:${port}/in`), { allowPrivate: false, userAgent: 'mada/test', resolver })).toEqual({
        delivered: false,
        statusCode: null,
        error: 'address_refused',
      });
    }
    expect(hits).toEqual([]);
  });

  it('reports a closed port as a connection failure, not a status', async () => {
    const { url } = await serve((_request, response) => response.end());
    servers[0]!.closeAllConnections();
    await new Promise<void>((resolve) => servers.pop()!.close(() => resolve()));
    expect(await sendDelivery(delivery(`${url}/in`), allow)).toEqual({ delivered: false, statusCode: null, error: 'connection' });
  });
});

describe('public addresses', () => {
  it('passes plain unicast addresses only', () => {
    const refused = ['127.0.0.1', '10.0.0.1', '172.16.5.4', '192.168.0.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '255.255.255.255', '224.0.0.1'];
    const refused6 = ['::1', '::', 'fd00::1', 'fd00:ec2::254', 'fe80::1%eth0', '::ffff:127.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a9fe:a9fe', '2002:a9fe:a9fe::1', 'ff02::1', '::7f00:1', '::a9fe:a9fe', '4000::1'];
    for (const address of [...refused, ...refused6, 'not-an-address', '']) expect({ address, public: isPublicAddress(address) }).toEqual({ address, public: false });
    for (const address of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '[2001:4860:4860::8888]']) expect({ address, public: isPublicAddress(address) }).toEqual({ address, public: true });
  });
});
