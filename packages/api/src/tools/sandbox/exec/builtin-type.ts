const KEYWORDS = new Set(['if', 'then', 'else', 'elif', 'fi', 'case', 'esac', 'for', 'select', 'while', 'until', 'do', 'done', 'in', 'function', 'time', '{', '}', '!', '[[', ']]', 'coproc']);
const BUILTINS = new Set([
  'cd', 'echo', 'pwd', 'type', 'printf', 'test', '[', 'true', 'false', 'exit', 'export', 'set', 'unset', 'source', '.',
  'alias', 'unalias', 'read', 'wait', 'kill', 'eval', 'exec', 'command', 'builtin', 'let', 'local', 'declare', 'shift',
  'return', 'trap', 'umask', 'ulimit', 'hash', 'help', 'history', 'jobs', 'fg', 'bg', 'times', 'getopts', 'readonly',
]);

export interface BuiltinResult {
  stdout: string;
  stderr: string;
  status: number;
}

/**
 * Bash's `type`, answered in-process (there is no `type` program): keyword, builtin, or the file
 * a name runs, using the same search path the commands get.
 */
export function runType(argv: string[], locate: (name: string) => string | undefined): BuiltinResult {
  const flags = new Set<string>();
  let i = 1;
  for (; i < argv.length && (argv[i] as string).startsWith('-') && argv[i] !== '-'; i++) {
    if (argv[i] === '--') {
      i++;
      break;
    }
    for (const flag of (argv[i] as string).slice(1)) flags.add(flag);
  }
  let stdout = '';
  let stderr = '';
  let status = 0;
  for (const name of argv.slice(i)) {
    const line = describe(name, flags, locate);
    if (line === undefined) {
      if (!flags.has('t') && !flags.has('p') && !flags.has('P')) stderr += `type: ${name}: not found\n`;
      status = 1;
    } else if (line !== '') {
      stdout += `${line}\n`;
    }
  }
  return { stdout, stderr, status };
}

function describe(name: string, flags: Set<string>, locate: (name: string) => string | undefined): string | undefined {
  const pathOnly = flags.has('p') || flags.has('P');
  if (!flags.has('P')) {
    if (KEYWORDS.has(name)) return pathOnly ? '' : flags.has('t') ? 'keyword' : `${name} is a shell keyword`;
    if (BUILTINS.has(name)) return pathOnly ? '' : flags.has('t') ? 'builtin' : `${name} is a shell builtin`;
  }
  const file = locate(name);
  if (file === undefined) return undefined;
  if (pathOnly) return file;
  return flags.has('t') ? 'file' : `${name} is ${file}`;
}
