import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCommand, type CheckRequest, type ShellToolName } from '../../../src/tools/sandbox/command-policy/index.js';
import { childEnvironment } from '../../../src/tools/sandbox/exec/environment.js';
import { locateProgram } from '../../../src/tools/sandbox/exec/program-path.js';
import { createProject, type Project } from './support/project.js';

let project: Project;
beforeAll(() => {
  project = createProject();
});
afterAll(() => project.cleanup());

function request(command: string, tool: ShellToolName = 'bash', cwd?: string): CheckRequest {
  const env = childEnvironment(process.env, project.sandbox.roots);
  return {
    tool,
    command,
    cwd: cwd ?? project.root,
    baseDir: project.root,
    sandbox: project.sandbox,
    home: '/home/agent',
    locate: (name) => locateProgram(name, env.PATH as string),
  };
}

const check = (command: string, tool: ShellToolName = 'bash', cwd?: string) => checkCommand(request(command, tool, cwd));
const refusal = (command: string, tool: ShellToolName = 'bash', cwd?: string): Promise<string> =>
  check(command, tool, cwd).then(
    () => 'allowed',
    (error: unknown) => (error as Error).message,
  );

describe('raw text checks', () => {
  it('refuses a command longer than 8 KiB and accepts one just under', async () => {
    expect(await refusal(`echo ${'a'.repeat(8 * 1024)}`)).toBe('Command not allowed: the command is longer than 8 KiB');
    await expect(check(`echo ${'a'.repeat(8 * 1024 - 5)}`)).resolves.toBeDefined();
  });

  it('counts bytes, not characters, against the limit', async () => {
    expect(await refusal(`echo ${'é'.repeat(4100)}`)).toContain('longer than 8 KiB');
  });

  it('ignores surrounding whitespace but still refuses an inner newline in bash_readonly', async () => {
    await expect(check('  ls -la \n', 'bash_readonly')).resolves.toBeDefined();
    expect(await refusal('ls\n\nls', 'bash_readonly')).toContain('newlines are not allowed');
  });
});

describe('parsing', () => {
  it('turns lists and pipelines into a plan of argv without a shell', async () => {
    const { script } = await check("cat notes.txt | sort -r && echo 'two words' || echo no; wc -l < notes.txt > count.txt 2>&1");
    expect(script.statements).toHaveLength(2);
    const [first, second] = script.statements;
    expect(first?.first.commands.map((c) => [c.program, ...c.args.map((a) => a.value)])).toEqual([
      ['cat', 'notes.txt'],
      ['sort', '-r'],
    ]);
    expect(first?.rest.map((r) => [r.operator, r.pipeline.commands[0]?.args[0]?.value])).toEqual([
      ['&&', 'two words'],
      ['||', 'no'],
    ]);
    expect(second?.first.commands[0]?.redirections.map((r) => r.kind)).toEqual(['read', 'write', 'duplicate']);
  });

  it('removes quotes from program names before judging them', async () => {
    for (const spelling of ["r''m", '"rm"', '\\rm', "'r'm"]) {
      const { script } = await check(`${spelling} notes.txt`);
      expect(script.statements[0]?.first.commands[0]?.program).toBe('rm');
    }
  });

  it('refuses text the two parsers read differently', async () => {
    expect(await refusal('cat 0<notes.txt')).toContain('two bash parsers read it differently');
  });

  it('refuses text a tolerant parser would silently drop', async () => {
    expect(await refusal('ls (')).toMatch(/^Command not allowed: /);
  });

  it('keeps a here-document body as stdin text, unexpanded when the delimiter is quoted', async () => {
    const { script } = await check("cat <<'EOF'\n$HOME `id`\nEOF");
    expect(script.statements[0]?.first.commands[0]?.redirections).toEqual([{ kind: 'text', fd: 0, text: '$HOME `id`\n' }]);
  });

  it('expands a leading ~ to the home directory only', async () => {
    const { invocations } = await check('echo ~ ~/x a~ "~"');
    expect(invocations[0]?.argv).toEqual(['echo', '/home/agent', '/home/agent/x', 'a~', '~']);
  });
});

describe('globs', () => {
  it('expand inside the sandbox in sorted order', async () => {
    const { invocations } = await check('ls src/*.ts');
    expect(invocations[0]?.argv).toEqual(['ls', 'src/app.ts', 'src/util.ts']);
  });

  it('stay literal when nothing matches, as in bash', async () => {
    const { invocations } = await check('echo *.nothing');
    expect(invocations[0]?.argv).toEqual(['echo', '*.nothing']);
  });

  it('are expanded before options are read, so a file named -rf cannot smuggle a flag', async () => {
    const dir = join(project.root, 'trap');
    mkdirSync(dir);
    writeFileSync(join(dir, '-rf'), '');
    writeFileSync(join(dir, 'a'), '');
    expect(await refusal('rm *', 'bash', dir)).toContain('recursive removal is refused');
    writeFileSync(join(dir, '--output=x'), '');
    expect(await refusal('git diff *', 'bash', dir)).toContain('writes to a file');
  });

  it('never list a directory outside the sandbox', async () => {
    expect(await refusal('echo /etc/*')).toBe('Path outside allowed paths: /etc/*');
  });
});

describe('paths', () => {
  it('follow symbolic links before applying .. (as the kernel does)', async () => {
    expect(await refusal('cat escape/../etc/passwd')).toBe('Path outside allowed paths: escape/../etc/passwd');
  });

  it('allow the standard streams but not removing them', async () => {
    await expect(check('cat /dev/null > /dev/null')).resolves.toBeDefined();
    expect(await refusal('rm /dev/null')).toBe('Path outside allowed paths: /dev/null');
  });

  it('treat sed scripts, awk programs and grep patterns as text, not paths', async () => {
    await expect(check("grep -e /etc/passwd notes.txt | sed 's|/etc|/x|' | awk '/\\/root/ {print}'")).resolves.toBeDefined();
  });
});

describe('working directory', () => {
  it.each([
    ['a missing directory', 'missing'],
    ['a directory outside', '../outside'],
    ['a symlink leading outside', 'outside-link'],
    ['a file', 'notes.txt'],
    ['an absolute path outside', '/etc'],
  ])('refuses %s', async (_what, cwd) => {
    expect(await refusal('ls', 'bash', cwd)).toBe(`Working directory not allowed: ${cwd}`);
  });

  it('accepts a subdirectory, relative to the run directory', async () => {
    const checked = await check('ls', 'bash_readonly', 'src');
    expect(checked.cwd).toBe(join(project.root, 'src'));
  });
});

describe('what actually runs', () => {
  it('forces git to ignore repository config that could run code', async () => {
    const { invocations } = await check('git log --oneline');
    const argv = invocations[0]?.argv ?? [];
    expect(argv.slice(0, 7)).toEqual(['git', '-c', 'core.fsmonitor=false', '-c', 'core.pager=cat', '-c', 'core.hooksPath=/dev/null']);
    expect(argv).toEqual(expect.arrayContaining(['safe.bareRepository=explicit', 'credential.helper=']));
    // Not `-c diff.external=`: git 2.39 then fails a plain `git diff` ("external diff died").
    expect(argv).not.toContain('diff.external=');
    expect(argv.slice(-4)).toEqual(['log', '--no-ext-diff', '--no-textconv', '--oneline']);
  });

  it('runs sed and awk in their own sandbox modes', async () => {
    const { invocations } = await check("sed -n 1p notes.txt | awk '{print}'");
    expect(invocations.map((i) => i.argv[1])).toEqual(['--sandbox', '--sandbox']);
  });

  it('extracts archives without owners, setuid bits or repository hooks', async () => {
    const { invocations } = await check('tar xf archive.tar');
    expect(invocations[0]?.argv).toEqual([
      'tar', '--no-same-owner', '--no-same-permissions', '--exclude=.git', '-x', '-f', 'archive.tar',
    ]);
  });

  it('resolves programs to absolute paths outside the allowed paths', async () => {
    const bin = join(project.root, 'bin');
    mkdirSync(bin);
    symlinkSync('/bin/true', join(bin, 'ls'));
    const env = childEnvironment({ PATH: `${bin}:/usr/bin:/bin` }, project.sandbox.roots);
    expect(env.PATH).toBe('/usr/bin:/bin');
    const { invocations } = await check('ls');
    expect(invocations[0]?.executable).toMatch(/^\/(usr\/)?bin\/ls$/);
  });
});

describe('option reading', () => {
  it.each([
    ['sed -ni p notes.txt', 'bundled -n -i'],
    ['sed -i.bak p notes.txt', 'attached suffix'],
    ['sed --in-pl p notes.txt', 'abbreviated --in-place'],
    ['sed p notes.txt --in-place', 'option after the operands'],
  ])('finds sed -i in %s (%s)', async (command) => {
    expect(await refusal(command, 'bash_readonly')).toContain('edits files in place');
  });

  it('refuses an ambiguous abbreviation', async () => {
    expect(await refusal('ls --h notes.txt')).toContain('ambiguous option');
  });

  it('reads -e values as text and operands after them as files', async () => {
    expect(await refusal('grep -e x /etc/hosts')).toBe('Path outside allowed paths: /etc/hosts');
    await expect(check('grep -e /etc/hosts notes.txt')).resolves.toBeDefined();
  });
});
