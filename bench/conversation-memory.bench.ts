import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRepository } from '../packages/api/src/db/open.js';
import { once } from 'node:events';
import type { ChildProcess } from 'node:child_process';
import { spawnService } from '../packages/api/test/support/service-process.js';
import { absolute, type Bench } from './harness.js';

const CLIENTS = 6;
const MESSAGES = 600;
/** 600 messages of 100 KB: a 60 MB conversation. */
const MESSAGE_CHARS = 100_000;
/** The whole bench gives up after this, whatever happens. */
const DEADLINE_MS = 180_000;

/** The service's peak resident memory so far, in MB (Linux: VmHWM). */
function peakRssMb(pid: number): number {
  const line = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!line?.[1]) throw new Error('no VmHWM in /proc/<pid>/status');
  return Number(line[1]) / 1024;
}

/** A SQLite database under `dataDir` holding one conversation of the local user, about 60 MB. */
async function seed(dataDir: string): Promise<string> {
  const path = join(dataDir, 'mada.db');
  const repository = await openRepository({ dialect: 'sqlite', path, url: `sqlite:///${path}` });
  const id = randomUUID();
  await repository.createConversationWithin({ id, userId: 'local', agentType: 'explore', workingDir: '.', title: 'long', now: new Date() }, { max: 1, activeSince: null });
  const content = 'All work and no play. '.repeat(MESSAGE_CHARS / 22 + 1).slice(0, MESSAGE_CHARS);
  for (let i = 0; i < MESSAGES; i += 50) {
    const batch = Array.from({ length: 50 }, (_, j) => ({ id: randomUUID(), role: (i + j) % 2 ? 'assistant' : 'user', content, tokenCount: 25_000 }));
    await repository.appendMessages(id, batch, { now: new Date(), titleIfUnset: null });
  }
  await repository.close();
  return id;
}

/** The address the service logs once it listens; rejects when it exits first or the signal fires. */
async function listening(child: ChildProcess, signal: AbortSignal): Promise<string> {
  let text = '';
  const onData = (chunk: Buffer) => (text += chunk.toString());
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  for (;;) {
    const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
    if (match?.[1]) return match[1];
    if (child.exitCode !== null) throw new Error(`service exited before listening:\n${text}`);
    signal.throwIfAborted();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Reads a body to its end without keeping it; answers its length in bytes. */
async function drain(url: string, signal: AbortSignal): Promise<number> {
  const response = await fetch(url, { signal });
  if (response.status !== 200 || !response.body) throw new Error(`${url}: ${response.status}`);
  let bytes = 0;
  for await (const chunk of response.body) bytes += (chunk as Uint8Array).byteLength;
  return bytes;
}

const bench: Bench = async () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-bench-memory-')));
  const signal = AbortSignal.timeout(DEADLINE_MS);
  try {
    const id = await seed(dir);
    const child = spawnService({ DATA_DIR: dir, RATE_LIMIT_PER_MINUTE: '0' }, dir);
    try {
      const url = await listening(child, signal);
      const pid = child.pid!;
      // The baseline: the same process once started and warmed by a small read.
      await drain(`${url}/conversations/${id}/messages?limit=1`, signal);
      const idle = peakRssMb(pid);
      const sizes = await Promise.all(Array.from({ length: CLIENTS }, () => drain(`${url}/conversations/${id}`, signal)));
      const peak = peakRssMb(pid);
      const mb = (sizes[0]! / 1e6).toFixed(0);
      return [absolute(`service peak RSS while ${CLIENTS} clients read a ${mb} MB conversation at once`, 'the same service idle', idle, peak, 'MB', 300)];
    } finally {
      if (child.exitCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export default bench;
