import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepProcessDirs } from '../src/util/process-dir.js';
import { startService, tempEnv, TSX, type ServiceProcess } from './support/service-process.js';
import { until } from './support/until.js';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
/** Nothing listens on the discard port: the runtime is "not started yet". */
const DOWN = 'http://127.0.0.1:9';
const UNREACHABLE = `Model runtime not reachable at ${DOWN}: start it with \`ollama serve\``;

let running: ServiceProcess | undefined;
let terminal: ChildProcess | undefined;
const dirs: string[] = [];
const workdir = (): string => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-logs-')));
  dirs.push(dir);
  return dir;
};

/** Members of process group `group` still running (a zombie is done). */
function groupRunning(group: number): boolean {
  for (const entry of readdirSync('/proc')) {
    try {
      const [state, , pgrp] = readFileSync(`/proc/${entry}/stat`, 'latin1').replace(/^.*\) /s, '').split(' ');
      if (Number(pgrp) === group && state !== 'Z') return true;
    } catch {
      // Not a process, or gone meanwhile.
    }
  }
  return false;
}

afterEach(async () => {
  running?.child.kill('SIGKILL');
  running = undefined;
  // `script` and the service under it: the whole process group. The service cannot remove its
  // process directory then (SIGKILL), so it is swept once the group has ended.
  const group = terminal?.pid;
  if (group !== undefined && terminal!.exitCode === null) {
    process.kill(-group, 'SIGKILL');
    await until(async () => !groupRunning(group), (ended) => ended, 'the service under script to end');
    await sweepProcessDirs(tmpdir());
  }
  terminal = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const quote = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/** The service under a pseudo-terminal (`script`), as a user starts it; resolves with its output once it listens. */
async function startOnTerminal(env: Record<string, string>): Promise<string> {
  const command = [process.execPath, '--conditions=mada-source', '--import', TSX, MAIN].map(quote).join(' ');
  terminal = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: workdir(),
    detached: true,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...tempEnv(), TERM: 'xterm', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let text = '';
  return new Promise((resolve, reject) => {
    terminal!.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (/Server listening at http/.test(text)) resolve(text);
    });
    terminal!.on('exit', (code) => reject(new Error(`exited with ${code}:\n${text}`)));
  });
}

// eslint-disable-next-line no-control-regex
const plain = (text: string): string => text.replace(/\u001b\[[0-9;]*m/g, '').replaceAll('\r', '');

describe('service logs', () => {
  it('are JSON lines on a pipe, with one warning line (no stack) for a runtime that is down', async () => {
    running = await startService({ LLM_BASE_URL: DOWN }, workdir());
    const lines = running.output().trim().split('\n');
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
    const warnings = lines.filter((line) => line.includes('not reachable'));
    expect(warnings).toHaveLength(1);
    expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, msg: expect.stringContaining(UNREACHABLE) });
    expect(running.output()).not.toMatch(/"stack"|\n\s+at /);
  });

  it('are short readable lines on a terminal, JSON nowhere', async () => {
    const text = plain(await startOnTerminal({ LLM_BASE_URL: DOWN }));
    const lines = text.split('\n').filter((line) => line.trim() !== '');
    expect(lines.filter((line) => line.trimStart().startsWith('{'))).toEqual([]);
    const warning = lines.filter((line) => line.includes('not reachable'));
    expect(warning).toHaveLength(1);
    expect(warning[0]).toMatch(/^\[\d\d:\d\d:\d\d\] WARN: /);
    expect(warning[0]).toContain(UNREACHABLE);
    expect(warning[0]!.length).toBeLessThan(160);
    expect(text).not.toMatch(/\n\s+at /);
  });

  it('are JSON on a terminal when LOG_FORMAT=json asks', async () => {
    const lines = plain(await startOnTerminal({ LLM_BASE_URL: DOWN, LOG_FORMAT: 'json' }))
      .split('\n')
      .filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(() => JSON.parse(line) as unknown, line).not.toThrow();
  });
});
