import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const PG_ROOT = '/usr/lib/postgresql';

/** The newest installed server's bin directory (Debian's layout), or undefined. */
function serverBin(): string | undefined {
  if (!existsSync(PG_ROOT)) return undefined;
  const versions = readdirSync(PG_ROOT).filter((v) => existsSync(join(PG_ROOT, v, 'bin', 'pg_ctl')));
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? undefined : join(PG_ROOT, newest, 'bin');
}

/** Why a private server cannot run here (PostgreSQL refuses to run as root; we switch to `postgres`), or undefined. */
export function ownPostgresUnavailable(): string | undefined {
  if (!serverBin()) return `no PostgreSQL server binaries under ${PG_ROOT}`;
  if (userInfo().uid !== 0) return 'needs root to run the server as the postgres user';
  return undefined;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

export interface OwnPostgres {
  /** postgresql:// URL of its `postgres` database. */
  url: string;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and deletes its data directory. */
  destroy(): Promise<void>;
}

/**
 * A PostgreSQL server of the test's own (own data directory, own port, trust auth on
 * 127.0.0.1), so a test may stop and start it without touching the machine's cluster.
 */
export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = serverBin();
  if (!bin) throw new Error(ownPostgresUnavailable());
  const dir = mkdtempSync(join(tmpdir(), 'mada-pg-'));
  chownSync(dir, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), Number((await run('id', ['-g', 'postgres'])).stdout.trim()));
  const data = join(dir, 'data');
  const port = await freePort();
  const asPostgres = (tool: string, args: string[]) => run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args], { cwd: dir });
  await asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  const start = async () => void (await asPostgres('pg_ctl', ['-D', data, '-o', options, '-l', join(dir, 'server.log'), '-w', '-t', '30', 'start']));
  const stop = async () => void (await asPostgres('pg_ctl', ['-D', data, '-m', 'fast', '-w', '-t', '30', 'stop']));
  await start();
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async destroy() {
      // Its data is deleted next: no clean shutdown to wait for (a fast one took over 30 s at load 11).
      await asPostgres('pg_ctl', ['-D', data, '-m', 'immediate', '-w', '-t', '30', 'stop']).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
