import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/cli-process.js';
import { startMadaService, type RunningService } from './support/service.js';

const run = promisify(execFile);
const PACKAGE_DIR = fileURLToPath(new URL('..', import.meta.url));
const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as { version: string }).version;

const temps: string[] = [];
afterAll(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(prefix: string): string {
  const dir = tempDir(prefix);
  temps.push(dir);
  return dir;
}

/**
 * A shell's environment without what `npm test` adds (npm_config_*, npm_lifecycle_*), so npm
 * children read only their flags; offline, with a throwaway HOME and cache, so nothing can come
 * from a registry or from what an earlier install left behind.
 */
function npmEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    LANG: 'C.UTF-8',
    npm_config_offline: 'true',
    npm_config_cache: join(home, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    ...extra,
  };
}

async function sh(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ stdout: string; stderr: string }> {
  return run(command, args, { cwd, env, encoding: 'utf8', timeout: 90_000, maxBuffer: 16 * 1024 * 1024 });
}

describe('mada in a checkout, as the README says', () => {
  it('npx mada runs the committed bin entry that npm ci linked, built or not', async () => {
    expect(realpathSync(join(REPO_ROOT, 'node_modules/.bin/mada'))).toBe(join(PACKAGE_DIR, 'bin/mada.js'));
    const home = scratch('mada-npx-home-');
    const result = await sh('npx', ['mada', '--version'], REPO_ROOT, npmEnv(home));
    expect(result.stdout).toBe(`${VERSION}\n`);
  });

  it('runs the sources when nothing is built, and says what to do when it cannot', async () => {
    // A copy of the package without dist/: the launcher, and the real sources by symlink.
    const copy = scratch('mada-unbuilt-');
    mkdirSync(join(copy, 'bin'));
    copyFileSync(join(PACKAGE_DIR, 'bin/mada.js'), join(copy, 'bin/mada.js'));
    copyFileSync(join(PACKAGE_DIR, 'package.json'), join(copy, 'package.json'));
    symlinkSync(join(PACKAGE_DIR, 'src'), join(copy, 'src'));
    const launch = () => sh(process.execPath, [join(copy, 'bin/mada.js'), '--version'], copy, npmEnv(copy));

    await expect(launch()).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('run `npm ci && npm run build`') });
    symlinkSync(join(REPO_ROOT, 'node_modules'), join(copy, 'node_modules'));
    expect((await launch()).stdout).toBe(`${VERSION}\n`);
  });

  it('npm install -g ./packages/cli gives a global mada', async () => {
    const home = scratch('mada-global-home-');
    const prefix = join(home, 'prefix');
    await sh('npm', ['install', '-g', '--prefix', prefix, './packages/cli'], REPO_ROOT, npmEnv(home));
    const result = await sh(join(prefix, 'bin/mada'), ['--version'], home, npmEnv(home));
    expect(result.stdout).toBe(`${VERSION}\n`);
  });
});

describe('the packed client', () => {
  let service: RunningService;
  let home: string;
  let prefix: string;

  beforeAll(async () => {
    home = scratch('mada-pack-home-');
    prefix = join(home, 'prefix');
    const starting = startMadaService();
    // npm pack runs the client's prepack script, which writes the bundle; nothing else is built.
    const packed = await sh('npm', ['pack', '--json', '--pack-destination', home], PACKAGE_DIR, npmEnv(home));
    const [report] = JSON.parse(packed.stdout) as { filename: string }[];
    await sh('npm', ['install', '-g', '--prefix', prefix, join(home, report!.filename)], home, npmEnv(home));
    service = await starting;
  }, 120_000);

  afterAll(async () => {
    await service?.stop();
  });

  const mada = (args: string[]) => sh(join(prefix, 'bin/mada'), args, home, npmEnv(home));

  it('installs from the tarball alone, offline, and prints its version', async () => {
    expect((await mada(['--version'])).stdout).toBe(`${VERSION}\n`);
  });

  it('carries its dependencies bundled, and no sources', () => {
    const installed = join(prefix, 'lib/node_modules/@mada/cli');
    const manifest = JSON.parse(readFileSync(join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.dependencies).toBeUndefined();
    expect(readdirSync(installed).sort()).toEqual(['CHANGELOG.md', 'README.md', 'bin', 'dist', 'package.json']);
    expect(readdirSync(join(installed, 'dist')).sort()).toEqual(['THIRD-PARTY-NOTICES.md', 'mada.js']);
    expect(readFileSync(join(installed, 'dist/THIRD-PARTY-NOTICES.md'), 'utf8')).toContain('## commander ');
  });

  it('talks to a running service', async () => {
    const result = await mada(['status', '--json', '-a', service.url]);
    const report = JSON.parse(result.stdout) as { reachable: boolean; agents: { name: string }[] };
    expect(report.reachable).toBe(true);
    expect(report.agents.map((agent) => agent.name).sort()).toEqual(['explore', 'plan', 'task']);
  });
});
