/**
 * npm's command names and aliases (npm 11, lib/utils/cmd-list.js): npm also runs any unique
 * prefix of them and their camelCase spelling, so `npm add`, `npm isntall`, `npm clean-i` and
 * `npm installTest` all install. Approval rules must read a command the way npm does.
 */
const COMMANDS: readonly string[] = [
  'access', 'adduser', 'approve-scripts', 'audit', 'bugs', 'cache', 'ci', 'completion', 'config', 'dedupe',
  'deny-scripts', 'deprecate', 'diff', 'dist-tag', 'docs', 'doctor', 'edit', 'exec', 'explain', 'explore',
  'find-dupes', 'fund', 'get', 'help', 'help-search', 'init', 'install', 'install-ci-test', 'install-scripts',
  'install-test', 'link', 'll', 'login', 'logout', 'ls', 'org', 'outdated', 'owner', 'pack', 'ping', 'pkg', 'prefix',
  'profile', 'prune', 'publish', 'query', 'rebuild', 'repo', 'restart', 'root', 'run', 'sbom', 'search', 'set',
  'shrinkwrap', 'stage', 'star', 'stars', 'start', 'stop', 'team', 'test', 'token', 'trust', 'undeprecate',
  'uninstall', 'unpublish', 'unstar', 'update', 'version', 'view', 'whoami',
];

const ALIASES: Readonly<Record<string, string>> = {
  author: 'owner', home: 'docs', issues: 'bugs', info: 'view', show: 'view', find: 'search', add: 'install',
  unlink: 'uninstall', remove: 'uninstall', rm: 'uninstall', r: 'uninstall', un: 'uninstall', rb: 'rebuild',
  list: 'ls', ln: 'link', create: 'init', i: 'install', it: 'install-test', cit: 'install-ci-test', u: 'update',
  up: 'update', c: 'config', s: 'search', se: 'search', tst: 'test', t: 'test', ddp: 'dedupe', v: 'view',
  'run-script': 'run', 'clean-install': 'ci', 'clean-install-test': 'install-ci-test', x: 'exec', why: 'explain',
  la: 'll', verison: 'version', ic: 'ci', innit: 'init', in: 'install', ins: 'install', inst: 'install',
  insta: 'install', instal: 'install', isnt: 'install', isnta: 'install', isntal: 'install', isntall: 'install',
  'install-clean': 'ci', 'isntall-clean': 'ci', hlep: 'help', 'dist-tags': 'dist-tag', upgrade: 'update',
  udpate: 'update', rum: 'run', sit: 'install-ci-test', urn: 'run', ogr: 'org', 'add-user': 'adduser',
};

const NAMES: readonly string[] = [...COMMANDS, ...Object.keys(ALIASES)];

/** The command npm runs for `word` (npm's `deref`), or undefined when npm would not take it as one. */
export function npmCommand(word: string): string | undefined {
  const name = /[A-Z]/.test(word) ? word.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`) : word;
  if (name === '' || name.startsWith('-')) return undefined;
  if (COMMANDS.includes(name)) return name;
  const alias = ALIASES[name];
  if (alias !== undefined) return alias;
  // A unique prefix of a name (the `abbrev` package: a prefix shared by two names is nobody's).
  const completions = NAMES.filter((candidate) => candidate.startsWith(name));
  if (completions.length !== 1) return undefined;
  let found = completions[0] as string;
  while (ALIASES[found] !== undefined) found = ALIASES[found] as string;
  return found;
}

let spellings: ReadonlyMap<string, string> | undefined;

/** Every word npm reads as one of `commands`: the names, aliases and unique prefixes that lead there. */
export function npmSpellings(commands: ReadonlySet<string>): string[] {
  spellings ??= new Map(
    NAMES.flatMap((name) => [...name].map((_, i) => name.slice(0, i + 1))).flatMap((word) => {
      const command = npmCommand(word);
      return command === undefined ? [] : [[word, command] as const];
    }),
  );
  return [...spellings].filter(([, command]) => commands.has(command)).map(([word]) => word);
}
