import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CommandRefusal } from '../../../src/tools/sandbox/command-policy/index.js';
import { childEnvironment } from '../../../src/tools/sandbox/exec/environment.js';
import { execute, list, pipeline, run, sequence, testEnv } from './support/invocations.js';

let dir: string;
beforeAll(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'mada-exec-')));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Running (a zombie waiting for a reaper counts as gone), polled briefly since SIGKILL lands asynchronously. */
async function stillRunning(pid: number): Promise<boolean> {
  for (let i = 0; i < 30; i++) {
    let state: string;
    try {
      state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 'gone';
    } catch {
      state = 'gone';
    }
    if (state === 'gone' || state === 'Z' || state === 'X') return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}

const pidsIn = (output: string): number[] => [...output.matchAll(/pid=(\d+)/g)].map((m) => Number(m[1]));

describe('pipes and lists', () => {
  it('connects a pipeline without a shell', async () => {
    const result = await execute(sequence(pipeline(run(['printf', 'b\\na\\nc\\n']), run(['sort']), run(['head', '-n', '2']))), dir);
    expect(result).toMatchObject({ output: 'a\nb\n', exitCode: 0, truncated: false });
  });

  it('reports the status of the last command of a pipeline', async () => {
    const failing = await execute(sequence(pipeline(run(['true']), run(['false']))), dir);
    expect(failing.exitCode).toBe(1);
    const ok = await execute(sequence(pipeline(run(['false']), run(['true']))), dir);
    expect(ok.exitCode).toBe(0);
  });

  it('ends a producer whose reader stopped (SIGPIPE reaches it)', async () => {
    const result = await execute(sequence(pipeline(run(['yes']), run(['head', '-n', '2']))), dir, { timeoutMs: 10_000 });
    expect(result).toMatchObject({ output: 'y\ny\n', exitCode: 0, stopped: undefined });
  });

  it('runs && only after success and || only after failure', async () => {
    const result = await execute(
      list(pipeline(run(['false'])), ['&&', pipeline(run(['echo', 'skipped']))], ['||', pipeline(run(['echo', 'recovered']))], ['&&', pipeline(run(['echo', 'then']))]),
      dir,
    );
    expect(result).toMatchObject({ output: 'recovered\nthen\n', exitCode: 0 });
  });

  it('runs every statement of a ; sequence and reports the last status', async () => {
    const result = await execute(sequence(pipeline(run(['echo', 'one'])), pipeline(run(['false'])), pipeline(run(['echo', 'two']))), dir);
    expect(result).toMatchObject({ output: 'one\ntwo\n', exitCode: 0 });
  });

  it('reports a missing program as bash does (127)', async () => {
    const result = await execute(sequence(pipeline({ program: 'nope', executable: undefined, argv: ['nope'], redirections: [] })), dir);
    expect(result).toMatchObject({ output: 'nope: command not found\n', exitCode: 127 });
  });

  it('answers type itself, also inside a pipeline', async () => {
    const type = { program: 'type', executable: 'builtin' as const, argv: ['type', 'cat', 'cd'], redirections: [] };
    const result = await execute(sequence(pipeline(type, run(['tr', 'a-z', 'A-Z']))), dir);
    expect(result.output).toMatch(/^CAT IS \/.*\/CAT\nCD IS A SHELL BUILTIN\n$/);
  });

  it('stops at a command the policy refuses when its turn comes, after running the ones before', async () => {
    const result = await execute(sequence(pipeline(run(['echo', 'first'])), pipeline(run(['echo', 'second']))), dir, {
      prepare: (i) => {
        if (i.argv[1] === 'second') throw new CommandRefusal('changed since it was checked');
        return i;
      },
    });
    expect(result).toMatchObject({ output: 'first\n', refusal: 'Command not allowed: changed since it was checked' });
  });
});

describe('redirections', () => {
  it('writes, appends and reads files the service opens itself', async () => {
    const file = join(dir, 'out.txt');
    await execute(
      sequence(
        pipeline(run(['echo', 'one'], { kind: 'write', fd: 1, path: file, append: false })),
        pipeline(run(['echo', 'two'], { kind: 'write', fd: 1, path: file, append: true })),
      ),
      dir,
    );
    expect(readFileSync(file, 'utf8')).toBe('one\ntwo\n');
    const read = await execute(sequence(pipeline(run(['wc', '-l'], { kind: 'read', fd: 0, path: file }))), dir);
    expect(read.output.trim()).toBe('2');
  });

  it('applies duplications in order: 2>&1 >file keeps stderr in the output', async () => {
    const file = join(dir, 'only-stdout.txt');
    const sh = ['sh', '-c', 'echo out; echo err >&2'];
    const result = await execute(
      sequence(pipeline(run(sh, { kind: 'duplicate', fd: 2, from: 1 }, { kind: 'write', fd: 1, path: file, append: false }))),
      dir,
    );
    expect(result.output).toBe('err\n');
    expect(readFileSync(file, 'utf8')).toBe('out\n');
  });

  it('sends stderr into a pipe with 2>&1', async () => {
    const sh = ['sh', '-c', 'echo err >&2'];
    const result = await execute(sequence(pipeline(run(sh, { kind: 'duplicate', fd: 2, from: 1 }), run(['tr', 'a-z', 'A-Z']))), dir);
    expect(result.output).toBe('ERR\n');
  });

  it('treats /dev/null and /dev/stdout as bash does, never as the service\u2019s own streams', async () => {
    const sh = ['sh', '-c', 'echo out; echo err >&2'];
    const quiet = await execute(sequence(pipeline(run(sh, { kind: 'write', fd: 2, path: '/dev/null', append: false }))), dir);
    expect(quiet.output).toBe('out\n');
    const toStdout = await execute(sequence(pipeline(run(['echo', 'x'], { kind: 'write', fd: 1, path: '/dev/stdout', append: false }))), dir);
    expect(toStdout.output).toBe('x\n');
  });

  it('feeds here-document text to stdin', async () => {
    const result = await execute(sequence(pipeline(run(['cat'], { kind: 'text', fd: 0, text: 'from heredoc\n' }))), dir);
    expect(result.output).toBe('from heredoc\n');
  });

  it('fails a redirection to a FIFO at once instead of blocking the service', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const started = Date.now();
    const result = await execute(sequence(pipeline(run(['echo', 'x'], { kind: 'write', fd: 1, path: fifo, append: false }))), dir);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.exitCode).not.toBe(0);
  });
});

describe('stopping', () => {
  it('kills the whole process group on timeout, grandchildren included', async () => {
    const sh = ['sh', '-c', 'sleep 300 & echo pid=$!; sleep 300'];
    const started = Date.now();
    const result = await execute(sequence(pipeline(run(sh))), dir, { timeoutMs: 500 });
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.stopped).toBe('timeout');
    const [grandchild] = pidsIn(result.output);
    expect(grandchild).toBeGreaterThan(0);
    expect(await stillRunning(grandchild as number)).toBe(false);
  });

  it('follows SIGTERM with SIGKILL for processes that ignore it', async () => {
    const sh = ['sh', '-c', 'trap "" TERM; sleep 300 & echo pid=$!; wait'];
    const result = await execute(sequence(pipeline(run(sh))), dir, { timeoutMs: 300, killGraceMs: 300 });
    expect(result.stopped).toBe('timeout');
    expect(await stillRunning(pidsIn(result.output)[0] as number)).toBe(false);
  });

  it('stops everything when the abort signal fires, and runs nothing after', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const marker = join(dir, 'after-abort');
    const result = await execute(
      sequence(pipeline(run(['sh', '-c', 'sleep 300 & echo pid=$!; wait'])), pipeline(run(['touch', marker]))),
      dir,
      { signal: controller.signal },
    );
    expect(result.stopped).toBe('abort');
    expect(await stillRunning(pidsIn(result.output)[0] as number)).toBe(false);
    expect(existsSync(marker)).toBe(false);
  });

  it('kills processes a finished command left behind in its group', async () => {
    const result = await execute(sequence(pipeline(run(['sh', '-c', 'sleep 300 > /dev/null & echo pid=$!']))), dir);
    expect(result.exitCode).toBe(0);
    expect(await stillRunning(pidsIn(result.output)[0] as number)).toBe(false);
  });
});

describe('output', () => {
  it('keeps 50,000 characters of a huge output without buffering the rest', async () => {
    const before = process.memoryUsage().heapUsed;
    const result = await execute(sequence(pipeline(run(['head', '-c', '200000000', '/dev/zero']), run(['tr', '\\0', 'a']))), dir, {
      timeoutMs: 60_000,
      floodChars: Number.POSITIVE_INFINITY,
    });
    const grown = process.memoryUsage().heapUsed - before;
    expect(result).toMatchObject({ truncated: true, exitCode: 0, stopped: undefined });
    expect(result.output).toHaveLength(50_000);
    expect(result.output).toBe('a'.repeat(50_000));
    // 200 MB held as a string would need 200-400 MB.
    expect(grown).toBeLessThan(64 * 1024 * 1024);
  });

  it('stops a command that floods far past the limit', async () => {
    const result = await execute(sequence(pipeline(run(['yes']))), dir, { floodChars: 1_000_000 });
    expect(result).toMatchObject({ stopped: 'flood', truncated: true });
  });

  it('merges stdout and stderr in the order they were written', async () => {
    const sh = ['sh', '-c', 'echo one; sleep 0.1; echo two >&2; sleep 0.1; echo three'];
    const result = await execute(sequence(pipeline(run(sh))), dir);
    expect(result.output).toBe('one\ntwo\nthree\n');
  });

  it('keeps multi-byte characters whole across chunks', async () => {
    const text = 'é€😀'.repeat(30_000);
    writeFileSync(join(dir, 'utf8.txt'), text);
    const result = await execute(sequence(pipeline(run(['cat', 'utf8.txt']))), dir);
    expect(result.output).toBe(text.slice(0, 50_000));
  });
});

describe('environment', () => {
  it('passes only allowlisted variables, never the service\u2019s secrets', async () => {
    process.env.MADA_TEST_SECRET = 'do-not-leak';
    try {
      const env = childEnvironment({ ...process.env, LC_ALL: 'C', API_KEYS: 'u:k' }, []);
      const result = await execute(sequence(pipeline(run(['env']))), dir, { env });
      expect(result.output).not.toContain('do-not-leak');
      expect(result.output).not.toContain('API_KEYS');
      const names = result.output.trim().split('\n').map((line) => line.split('=')[0]);
      for (const name of names) expect(['PATH', 'HOME', 'USER', 'LANG', 'TERM', 'TZ', 'TMPDIR'].includes(name as string) || name?.startsWith('LC_')).toBe(true);
      expect(names).toContain('LC_ALL');
    } finally {
      delete process.env.MADA_TEST_SECRET;
    }
  });

  it('drops relative directories and allowed paths from PATH', () => {
    const env = childEnvironment({ PATH: `.:bin:${dir}/bin:/usr/bin` }, [dir]);
    expect(env.PATH).toBe('/usr/bin');
    expect(testEnv.PATH).not.toContain(':.');
  });
});
