import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bashTool } from '../../../src/tools/bash.js';
import { editFileTool } from '../../../src/tools/edit-file.js';
import { writeFileTool } from '../../../src/tools/write-file.js';
import type { ToolSettings } from '../../../src/tools/tool.js';
import { createProject, testSettings, toolContext, type Project } from './support/project.js';

/*
 * The machine's disk cannot be shrunk for a test, so each floor is set from what is free now: a
 * little below it (a command must cross it by writing), or above it (crossed already). What other
 * processes on the machine write meanwhile moves the free space by far less than the margins.
 */

const MIB = 1024 * 1024;
const MARGIN_MIB = 512;

let project: Project;
beforeEach(() => {
  project = createProject();
});
afterEach(() => project.cleanup());

const bash = (command: string, settings: Partial<ToolSettings>) =>
  bashTool.execute(bashTool.parameters.parse({ command, timeout: 60 }), toolContext(project, { settings: testSettings(settings) }));

/** Free MiB (what an unprivileged writer may use) and free inodes of the file system holding `path`, now. */
function freeAt(path: string): { mib: number; inodes: number } {
  const stats = statfsSync(path);
  return { mib: Math.floor((stats.bavail * stats.bsize) / MIB), inodes: stats.ffree };
}

const sizeOf = (name: string): number => statSync(join(project.root, name)).size;

/** A python program that writes `size` MiB into `name`, a MiB at a time. */
const writeMib = (name: string, size: number): string => `python3 -c "f = open('${name}', 'wb')\nfor _ in range(${size}): f.write(bytes(${MIB}))"`;

describe('the file size limit (SANDBOX_MAX_FILE_MB)', () => {
  beforeEach(() => writeFileSync(join(project.root, 'eight'), Buffer.alloc(8 * MIB, 1)));

  it('cuts a file at the limit and kills its writer with SIGXFSZ, and the answer says so', async () => {
    const result = await bash('cat eight > big', { sandboxMaxFileMb: 2 });
    expect(sizeOf('big')).toBe(2 * MIB);
    expect(result.success).toBe(false);
    expect(result.metadata.exit_code).toBe(153);
    expect(result.error).toContain('[a process was killed (SIGXFSZ) for writing a file past the size limit of 2 MiB (SANDBOX_MAX_FILE_MB); the file was cut there]');
  });

  it('holds for a process that ignores SIGXFSZ (python gets EFBIG) and for what a process starts', async () => {
    const result = await bash(`${writeMib('own', 8)}; python3 -c "import subprocess; subprocess.run(['cp', 'eight', 'copy'])"`, { sandboxMaxFileMb: 2 });
    expect(sizeOf('own')).toBe(2 * MIB);
    // The last command succeeded: the call did, and python's complaint is in its output.
    expect(result.data).toContain('OSError: [Errno 27] File too large');
    expect(sizeOf('copy')).toBe(2 * MIB);
  });
});

describe('the file size limit against a command that tries to lift it', () => {
  it('cannot be raised, not even as root of a nested user namespace', async () => {
    // The hard limit is set too, and only CAP_SYS_RESOURCE of the host's user namespace raises it.
    const program = [
      'import ctypes, resource',
      'print("unshare", ctypes.CDLL(None, use_errno=True).unshare(0x10000000))',
      'try:',
      '    resource.setrlimit(resource.RLIMIT_FSIZE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))',
      '    print("raised")',
      'except (ValueError, OSError) as error:',
      '    print("refused", error)',
      `open("big", "wb").write(bytes(${8 * MIB}))`,
    ].join('\n');
    writeFileSync(join(project.root, 'lift.py'), `${program}\n`);
    const result = await bash('python3 lift.py', { sandboxMaxFileMb: 2 });
    expect(result.error).toContain('unshare 0');
    expect(result.error).toContain('refused');
    expect(result.error).toContain('File too large');
    expect(sizeOf('big')).toBe(2 * MIB);
  });
});

describe('the free-space floor (SANDBOX_MIN_FREE_MB, SANDBOX_MIN_FREE_PERCENT, SANDBOX_MIN_FREE_INODES)', () => {
  it('kills every process of a command that writes past the floor, runs nothing after it, and says why', async () => {
    const floor = freeAt(project.root).mib - MARGIN_MIB;
    const result = await bash(`${writeMib('big', 2048)}; touch after`, { sandboxMinFreeMb: floor, sandboxMaxFileMb: 32 * 1024 });
    expect(sizeOf('big')).toBeLessThan(2048 * MIB);
    expect(existsSync(join(project.root, 'after'))).toBe(false);
    expect(result.success).toBe(false);
    expect(result.metadata.below_disk_floor).toBe(true);
    expect(result.error).toMatch(/\[stopped, every process of the command killed: the file system of \S+ has \d+ MiB free, below the floor of \d+ MiB \(SANDBOX_MIN_FREE_MB/);
  });

  it('kills a command that uses up the free inodes', async () => {
    const floor = freeAt(project.root).inodes - 2000;
    mkdirSync(join(project.root, 'many'));
    const result = await bash(`python3 -c "[open('many/f%d' % i, 'w').close() for i in range(200000)]"`, { sandboxMinFreeMb: 0, sandboxMinFreeInodes: floor });
    expect(readdirSync(join(project.root, 'many')).length).toBeLessThan(200_000);
    expect(result.metadata.below_disk_floor).toBe(true);
    expect(result.error).toMatch(/free inodes \(files\), below the floor of \d+/);
  });

  describe('crossed already', () => {
    const crossed = (): Partial<ToolSettings> => ({ sandboxMinFreeMb: freeAt(project.root).mib + 1024 });

    it('refuses a command before it starts', async () => {
      const result = await bash('touch made', crossed());
      expect(existsSync(join(project.root, 'made'))).toBe(false);
      expect(result).toMatchObject({ success: false, metadata: { refused: true, below_disk_floor: true } });
      expect(result.error).toMatch(/^Refusing to run: the file system of \S+ has \d+ MiB free, below the floor of \d+ MiB/);
    });

    it('still runs a command made only of rm, so room can be made', async () => {
      const result = await bash('rm notes.txt && rm data.csv', crossed());
      expect(result.error).toBe('');
      expect(existsSync(join(project.root, 'notes.txt'))).toBe(false);
      expect(existsSync(join(project.root, 'data.csv'))).toBe(false);
      // A redirection would make a file: refused.
      expect((await bash('rm README.md > log', crossed())).metadata.refused).toBe(true);
      expect(existsSync(join(project.root, 'README.md'))).toBe(true);
    });

    it('refuses write_file and edit_file, and leaves the file as it was', async () => {
      const context = toolContext(project, { settings: testSettings(crossed()) });
      const written = await writeFileTool.execute(writeFileTool.parameters.parse({ file_path: 'new.txt', content: 'x' }), context);
      expect(written.success).toBe(false);
      expect(written.error).toMatch(/^Refusing to write \S+new\.txt: the file system of \S+ has \d+ MiB free, below the floor/);
      expect(existsSync(join(project.root, 'new.txt'))).toBe(false);
      const edited = await editFileTool.execute(editFileTool.parameters.parse({ file_path: 'notes.txt', old_string: 'alpha', new_string: 'omega' }), context);
      expect(edited.success).toBe(false);
      expect(edited.error).toContain('below the floor');
      expect(execFileSync('cat', [join(project.root, 'notes.txt')], { encoding: 'utf8' })).toContain('alpha');
    });

    it('is off with every floor setting at 0', async () => {
      const result = await bash('touch made', { sandboxMinFreeMb: 0, sandboxMinFreePercent: 0, sandboxMinFreeInodes: 0 });
      expect(result.error).toBe('');
      expect(existsSync(join(project.root, 'made'))).toBe(true);
    });
  });
});

/** A 16 MiB tmpfs, 15 MiB of it full: a file system far fuller than the project's. Needs root (CI runs as root). */
function fullTmpfs(): { dir: string; remove(): void } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const dir = mkdtempSync(join(tmpdir(), 'mada-data-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16m', 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
  writeFileSync(join(dir, 'filler'), Buffer.alloc(15 * MIB));
  return {
    dir,
    remove: () => {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const mountable = fullTmpfs();
if (mountable === undefined) console.warn('disk-floor tests: no tmpfs can be mounted here (not root); the floor on DATA_DIR is not tested');
else mountable.remove();

describe.runIf(mountable !== undefined)("the floor on DATA_DIR's file system", () => {
  it('refuses a command when the service data is below the floor, without naming where it lies', async () => {
    const data = fullTmpfs() as { dir: string; remove(): void };
    try {
      // Half the project's free share: its file system keeps that floor, the data's (1 MiB of 16) does not.
      const stats = statfsSync(project.root);
      const percent = Math.min(50, (50 * stats.bavail) / stats.blocks);
      expect(percent, 'the project\'s file system is too full for this test').toBeGreaterThan(100 / 16);
      const settings = { dataDir: join(data.dir, 'data'), sandboxMinFreeMb: 0, sandboxMinFreeInodes: 0, sandboxMinFreePercent: percent };
      const result = await bash('touch made', settings);
      expect(existsSync(join(project.root, 'made'))).toBe(false);
      expect(result.error).toMatch(/^Refusing to run: the file system of the service's data has \d+ MiB free, below the floor of \d+ MiB/);
      expect(result.error).not.toContain(data.dir);
    } finally {
      data.remove();
    }
  });
});
