import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bashNetwork } from '../../../../src/tools/sandbox/network-reach.js';
import type { Project } from '../support/project.js';
import { callTool, createArena, createTemplate, MARKER, type Arena } from './support.js';

/*
 * The known limit of SANDBOX_NETWORK=true, shown for real so it cannot be forgotten: `bash` shares
 * the host's network namespace, so it reaches what listens on the host's loopback and abstract
 * unix sockets. These tests pin today's behaviour and the honest report of it (/health's
 * `bash_network: host`, the start-up warning); when `bash` gets a network of its own, they must
 * flip to "not reached".
 */

let template: Project;
let arena: Arena;

beforeAll(() => {
  template = createTemplate();
  arena = createArena(template);
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

describe('bash with SANDBOX_NETWORK=true (known limit: the host network, loopback included)', () => {
  it('reaches a TCP listener on 127.0.0.1, and /health says so', async () => {
    const listener = await listen({ port: 0, host: '127.0.0.1' });
    try {
      const code = `import socket\ns = socket.create_connection(('127.0.0.1', ${listener.port}), timeout=2)\ns.send(b'GET /conversations HTTP/1.0\\r\\n\\r\\n')\nprint('connected')`;
      const shared = await callTool(arena, 'bash', python(code), { sandboxNetwork: true });
      expect(shared.data).toContain('connected');
      expect(listener.reached()).toBe(true);
      expect(bashNetwork({ sandboxNetwork: true }, 'bubblewrap')).toBe('host');
    } finally {
      listener.server.close();
    }
  });

  it('reaches an abstract unix socket of the host', async () => {
    const name = `${MARKER}-abstract`;
    const listener = await listen({ path: `\0${name}` });
    try {
      const code = `import socket\ns = socket.socket(socket.AF_UNIX)\ns.settimeout(2)\na = b'\\0${name}'\ns.connect(a + bytes(108 - len(a)))\nprint('connected')`;
      const shared = await callTool(arena, 'bash', python(code), { sandboxNetwork: true });
      expect(shared.data + shared.error).toContain('connected');
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(listener.reached()).toBe(true);
    } finally {
      listener.server.close();
    }
  });

  it('reaches neither with SANDBOX_NETWORK=false, the setting the docs give for such machines', async () => {
    const tcp = await listen({ port: 0, host: '127.0.0.1' });
    const abstract = await listen({ path: `\0${MARKER}-abstract-off` });
    try {
      const code = `import socket\nABSTRACT_OFF = b'\\0${MARKER}-abstract-off'\nABSTRACT_OFF += bytes(108 - len(ABSTRACT_OFF))\nfor family, target in [(socket.AF_INET, ('127.0.0.1', ${tcp.port})), (socket.AF_UNIX, ABSTRACT_OFF)]:\n    s = socket.socket(family)\n    s.settimeout(2)\n    try:\n        s.connect(target); print('connected')\n    except OSError as e:\n        print(e)`;
      const isolated = await callTool(arena, 'bash', python(code), { sandboxNetwork: false });
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(isolated.data + isolated.error).not.toContain('connected');
      expect(tcp.reached() || abstract.reached()).toBe(false);
      expect(bashNetwork({ sandboxNetwork: false }, 'bubblewrap')).toBe('none');
    } finally {
      tcp.server.close();
      abstract.server.close();
    }
  });
});
