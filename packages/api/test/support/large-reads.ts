import { spawn } from 'node:child_process';
import { expect } from 'vitest';
import { timeHealth } from './service-process.js';

/*
 * Readers of large bodies for tests of a service run as its own process: each reader is a curl of
 * its own, so reading hundreds of MB costs the test's event loop nothing, and what the test
 * measures meanwhile (how long other clients wait) is the service's, not the test's.
 */

/** Milliseconds until GET `url` has answered whole, with 200. */
export async function timed(url: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
  await response.arrayBuffer();
  expect(response.status).toBe(200);
  return performance.now() - started;
}

/** GET `url` with `key` by curl, the body written to `output`: its status and the bytes it read. */
export function curl(url: string, key: string, output: string): Promise<{ status: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('curl', ['-sS', '-H', `x-api-key: ${key}`, '-o', output, '-w', '%{http_code} %{size_download}', url]);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      const [status = '', bytes = '0'] = out.split(' ');
      resolve({ status, bytes: Number(bytes) });
    });
  });
}

/** The service's slowest answer to GET / and /health at rest, over ten rounds (it warms up too). */
export async function restingLatency(serviceUrl: string): Promise<number> {
  let slowest = 0;
  for (let i = 0; i < 10; i++) slowest = Math.max(slowest, await timed(`${serviceUrl}/`), await timeHealth(serviceUrl));
  return slowest;
}

/** What `readers` settle to, and the latencies of GET / and /health measured over and over until they do. */
export async function latenciesWhile<T>(serviceUrl: string, readers: Promise<T>): Promise<{ result: T; latencies: number[] }> {
  let reading = true;
  const settled = readers.finally(() => (reading = false));
  const latencies: number[] = [];
  while (reading) {
    latencies.push(await timed(`${serviceUrl}/`), await timeHealth(serviceUrl));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { result: await settled, latencies };
}
