import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashTool } from '../../../../src/tools/bash.js';
import { detectSandbox, type SandboxAvailability } from '../../../../src/tools/sandbox/launcher.js';
import { bashNetwork, hostNetworkWarning } from '../../../../src/tools/sandbox/network-reach.js';
import type { Project } from '../support/project.js';
import { testSettings, testToolHost } from '../support/project.js';
import { callTool, createArena, createTemplate, MARKER, type Arena } from './support.js';

/*
 * SANDBOX_NETWORK=true for real: `bash` gets a network namespace of its own, uplinked by
 * slirp4netns, so the host's loopback listeners (the service's keyless API, local databases) and
 * abstract unix sockets are out of reach while routed traffic still flows. Judged by whether the
 * listener in this process saw a connection.
 */

let template: Project;
let arena: Arena;
let sandbox: SandboxAvailability;

beforeAll(async () => {
  template = createTemplate();
  arena = createArena(template);
  sandbox = await detectSandbox({ sandboxEnabled: true });
});

afterAll(() => {
  arena.project.cleanup();
  template.cleanup();
});

/**
 * A listener of the test process (as the service's HTTP port would be) that records who connects.
 * Node binds an abstract name NUL-padded to the whole sun_path (108 bytes): a client must send it
 * padded the same way, or it asks for another name and is refused whatever the sandbox does.
 */
async function listen(address: { port: 0; host: string } | { path: string }): Promise<{ server: Server; reached: () => boolean; port: number }> {
  let reached = false;
  const server = createServer((socket) => {
    reached = true;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(address, resolve));
  const bound = server.address();
  return { server, reached: () => reached, port: typeof bound === 'object' && bound !== null ? bound.port : 0 };
}

const python = (code: string): Record<string, unknown> => ({ command: `python3 -c "${code}"` });
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 100));

/** Connects to each target and prints `connected <i>` or the error: the listeners judge. */
const connectAll = (targets: string[]): string =>
  `import socket\nfor i, (family, target) in enumerate([${targets.join(', ')}]):\n    s = socket.socket(family)\n    s.settimeout(2)\n    try:\n        s.connect(target); print('connected', i)\n    except OSError as e:\n        print(i, e)`;
const abstractTarget = (name: string): string => `(socket.AF_UNIX, b'\\0${name}' + bytes(107 - len('${name}')))`;

/** A second address this host owns that is not loopback: an interface's, else a dummy interface's (root). */
function outsideAddress(): { address: string; remove: () => void } | string {
  const own = Object.values(networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal);
  if (own !== undefined) return { address: own.address, remove: () => {} };
  if (process.getuid?.() !== 0) return 'this host has no non-loopback IPv4 address, and making a dummy interface needs root';
  const name = `mada${process.pid % 100000}`;
  const address = `198.18.${(process.pid >> 8) % 256}.${(process.pid % 254) + 1}`;
  try {
    execFileSync('ip', ['link', 'add', name, 'type', 'dummy'], { stdio: 'ignore' });
    execFileSync('ip', ['addr', 'add', `${address}/32`, 'dev', name], { stdio: 'ignore' });
    execFileSync('ip', ['link', 'set', name, 'up'], { stdio: 'ignore' });
  } catch (error) {
    try {
      execFileSync('ip', ['link', 'del', name], { stdio: 'ignore' });
    } catch {
      // Never made.
    }
    return `this host has no non-loopback IPv4 address and ip could not make a dummy interface: ${(error as Error).message}`;
  }
  return { address, remove: () => execFileSync('ip', ['link', 'del', name], { stdio: 'ignore' }) };
}

/** slirp4netns processes this test process started and that are still alive. */
function liveSlirps(): string[] {
  return readdirSync('/proc').filter((pid) => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      return /^Name:\s+slirp4netns$/m.test(status) && new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status) && !/^State:\s+Z/m.test(status);
    } catch {
      return false;
    }
  });
}

describe('bash with SANDBOX_NETWORK=true and slirp4netns: a network of its own', () => {
  it('is what /health reports here (or the host network, said plainly, without slirp4netns)', () => {
    expect(bashNetwork({ sandboxNetwork: true }, sandbox)).toBe(sandbox.slirpPath === undefined ? 'host' : 'own');
    expect(bashNetwork({ sandboxNetwork: false }, sandbox)).toBe('none');
  });

  it('says so at start-up when bash has to share the host network, and stays quiet when it has its own', () => {
    const settings = { sandboxNetwork: true, apiKeys: [] };
    const warning = hostNetworkWarning(settings, { state: 'bubblewrap', hostNetworkReason: 'slirp4netns is not installed' });
    expect(warning).toMatch(/shares the host's network.*slirp4netns is not installed; install slirp4netns.*127\.0\.0\.1.*asks no key/);
    expect(hostNetworkWarning(settings, { state: 'bubblewrap', slirpPath: '/usr/bin/slirp4netns' })).toBeUndefined();
    expect(hostNetworkWarning({ ...settings, sandboxNetwork: false }, { state: 'bubblewrap' })).toBeUndefined();
  });

  it('cannot reach a TCP listener on the host loopback or an abstract unix socket of the host', async (context) => {
    if (sandbox.slirpPath === undefined) return context.skip(`no isolated network here: ${sandbox.hostNetworkReason ?? sandbox.reason}`);
    const tcp = await listen({ port: 0, host: '127.0.0.1' });
    const abstract = await listen({ path: `\0${MARKER}-abstract` });
    try {
      // 10.0.2.2 is where slirp would map the host's loopback without --disable-host-loopback.
      const targets = [`(socket.AF_INET, ('127.0.0.1', ${tcp.port}))`, `(socket.AF_INET, ('10.0.2.2', ${tcp.port}))`, abstractTarget(`${MARKER}-abstract`)];
      const result = await callTool(arena, 'bash', python(connectAll(targets)), { sandboxNetwork: true });
      await settle();
      expect(result.data + result.error).not.toContain('connected');
      expect(tcp.reached()).toBe(false);
      expect(abstract.reached()).toBe(false);
    } finally {
      tcp.server.close();
      abstract.server.close();
    }
  });

  it('still reaches a routed address (a non-loopback address of this host, as the internet would be)', async (context) => {
    if (sandbox.slirpPath === undefined) return context.skip(`no isolated network here: ${sandbox.hostNetworkReason ?? sandbox.reason}`);
    const outside = outsideAddress();
    if (typeof outside === 'string') return context.skip(outside);
    const listener = await listen({ port: 0, host: outside.address });
    try {
      const result = await callTool(arena, 'bash', python(connectAll([`(socket.AF_INET, ('${outside.address}', ${listener.port}))`])), { sandboxNetwork: true });
      await settle();
      expect(result.data).toContain('connected 0');
      expect(listener.reached()).toBe(true);
    } finally {
      listener.server.close();
      outside.remove();
    }
  });

  it("resolves names through slirp's resolver, not the host's (a loopback resolver means nothing inside)", async (context) => {
    if (sandbox.slirpPath === undefined) return context.skip(`no isolated network here: ${sandbox.hostNetworkReason ?? sandbox.reason}`);
    const result = await callTool(arena, 'bash', python(`print(open('/etc/resolv.conf').read())`), { sandboxNetwork: true });
    expect(result.data).toMatch(/^nameserver 10\.0\.2\.3$/m);
    expect(result.data).not.toMatch(/^nameserver (?!10\.0\.2\.3$)/m);
  });

  it('stops the uplink with the command on timeout: no slirp4netns outlives the call', async (context) => {
    if (sandbox.slirpPath === undefined) return context.skip(`no isolated network here: ${sandbox.hostNetworkReason ?? sandbox.reason}`);
    const controller = new AbortController();
    const running = bashTool.execute(bashTool.parameters.parse(python(`import time\ntime.sleep(30)`)), {
      workingDir: arena.root,
      sandbox: arena.sandbox,
      settings: testSettings({ sandboxNetwork: true }),
      host: testToolHost,
      signal: controller.signal,
    });
    // The uplink is there while the command runs, so its absence afterwards means something.
    await expect.poll(liveSlirps, { timeout: 5000 }).not.toEqual([]);
    controller.abort();
    const result = await running;
    expect(result.success).toBe(false);
    expect(result.error).toMatch(/cancelled|timed out/);
    await expect.poll(liveSlirps, { timeout: 3000 }).toEqual([]);
  });

  it('has no network at all with SANDBOX_NETWORK=false', async () => {
    const tcp = await listen({ port: 0, host: '127.0.0.1' });
    try {
      const result = await callTool(arena, 'bash', python(connectAll([`(socket.AF_INET, ('127.0.0.1', ${tcp.port}))`])), { sandboxNetwork: false });
      await settle();
      expect(result.data + result.error).not.toContain('connected');
      expect(tcp.reached()).toBe(false);
    } finally {
      tcp.server.close();
    }
  });
});
