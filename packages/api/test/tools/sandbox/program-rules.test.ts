import { describe, expect, it } from 'vitest';
import { checkAwkProgram } from '../../../src/tools/sandbox/command-policy/programs/awk-program.js';
import { judgeMode } from '../../../src/tools/sandbox/command-policy/programs/file-mode.js';
import { checkSedScript } from '../../../src/tools/sandbox/command-policy/programs/sed-script.js';

const outcome = (run: () => void): string => {
  try {
    run();
    return 'ok';
  } catch (error) {
    return (error as Error).message;
  }
};

describe('chmod modes are judged by the mode they produce', () => {
  it.each(['644', '0755', '600', 'u+x', 'go-w', '-w', 'a=r', 'o=r', 'u=rwx,go=rx', 'a+X', '+x', 'o+t', 'o+w,o-w', '1755'])(
    'allows %s',
    (mode) => expect(judgeMode(mode)).toBeUndefined(),
  );

  it.each(['777', '666', '0777', '1777', '757', '2', '0646', 'a+w', 'o+w', '+w', '=rw', 'a+rwx', 'ugo=rw', 'o=u', 'a+g', 'u+x,o+w', 'o-w,o+w'])(
    'refuses %s (others could write)',
    (mode) => expect(judgeMode(mode)).toContain('lets others write'),
  );

  it.each(['4755', '2755', 'u+s', 'g+s', '+s', 'a+s'])('refuses %s (setuid or setgid)', (mode) => expect(judgeMode(mode)).toContain('setuid'));

  it.each(['rwx', 'u+q', '99999', 'o+w+', ''])('refuses %s as not understood or invalid', (mode) => expect(judgeMode(mode)).toBeDefined());
});

describe('sed scripts', () => {
  it.each(['p', '1,5p', 's/a/b/g', 's|/etc|/x|', '/x/d', '$!N;P;D', '2q', '/a/,/b/ { s/x/y/; p }', 'y/abc/xyz/', ':a;N;ba', '1~2p', '0,/re/s//X/', 's/a/b/3p', 'a\\', 'i hello', '# comment'])(
    'reads %s',
    (script) => expect(outcome(() => checkSedScript(script))).toBe('ok'),
  );

  it.each([
    ['w /tmp/x', 'writes a file'],
    ['1,5w out', 'writes a file'],
    ['s/a/b/w out', 'writes a file'],
    ['s/a/b/gw out', 'writes a file'],
    ['e id', 'runs a shell command'],
    ['1e', 'runs a shell command'],
    ['s/x/id/e', 'runs the pattern space'],
    ['r /etc/passwd', 'reads a file'],
    ['$R /etc/passwd', 'reads a file'],
    ['/x/W out', 'writes a file'],
    ['p;w out', 'writes a file'],
    ['{ w out\n}', 'writes a file'],
  ])('refuses %s', (script, reason) => expect(outcome(() => checkSedScript(script))).toContain(reason));

  it.each(['s/a/b', '{p', 'k', 'p x'])('refuses %s as not understood', (script) =>
    expect(outcome(() => checkSedScript(script))).toContain('not understood'),
  );
});

describe('awk programs', () => {
  it.each([
    '{print $1}',
    'NR > 1 {print $2}',
    '$3 >= 10 && $1 != "x" {n++} END {print n}',
    '/a|b/ {print}',
    '{ print ($1 > 2) }',
    'BEGIN { FS = "," } { s += $2 } END { printf "%d\\n", s }',
    '{ x = $1 / 2; print x }',
    '{ gsub(/\\//, "-"); print }',
    '$1 ~ /^[|]/',
  ])('allows %s', (program) => expect(outcome(() => checkAwkProgram(program))).toBe('ok'));

  it.each([
    ['BEGIN { system("id") }', 'system'],
    ['{ print | "sh" }', 'pipes'],
    ['{ print |& "cat" }', 'pipes'],
    ['BEGIN { "id" | getline x }', 'pipes'],
    ['{ getline line < "/etc/passwd" }', 'getline'],
    ['{ print > "/tmp/x" }', 'redirection'],
    ['{ print $1, $2 >> "out" }', 'redirection'],
    ['{ printf("%s", $0) > "out" }', 'redirection'],
    ['BEGIN { ARGV[1] = "/etc/passwd"; ARGC = 2 }', 'ARGV'],
    ['@load "filefuncs"', '@load'],
    ['{ print "unterminated }', 'unterminated'],
  ])('refuses %s', (program, reason) => expect(outcome(() => checkAwkProgram(program))).toContain(reason));
});
