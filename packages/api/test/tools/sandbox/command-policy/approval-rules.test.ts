import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ApprovalRuleSet,
  DEFAULT_APPROVAL_RULES,
  parsedArgvs,
  readApprovalRulesFile,
  shellSubject,
  type ApprovalRule,
} from '../../../../src/tools/sandbox/command-policy/index.js';
import { tempDir } from '../../../../../../test/helpers/temp-dirs.js';

const judgeCommand = (rules: readonly ApprovalRule[], command: string) =>
  new ApprovalRuleSet(rules).judge('bash', { kind: 'commands', argvs: parsedArgvs('bash', command, '/home/u') ?? [] }).action;

describe('approval rules on parsed commands', () => {
  const publish: ApprovalRule[] = [{ tool: 'bash', match: 'npm publish', action: 'deny' }];

  it.each(['npm publish', 'npm --loglevel info publish', "'npm' publish", 'npm "publish"', 'true && npm publish', 'echo go; npm publish --tag next'])(
    'a rule for `npm publish` catches %s',
    (command) => expect(judgeCommand(publish, command)).toBe('deny'),
  );

  it.each(['npm info publish-tools', 'echo npm publish', 'npm install', 'npmx publish'])('and lets %s through', (command) =>
    expect(judgeCommand(publish, command)).toBe('allow'),
  );

  it('wants the further words in order, not adjacent, and options anywhere', () => {
    expect(judgeCommand([{ tool: 'bash', match: 'git reset --hard', action: 'ask' }], 'git reset -q --hard HEAD~1')).toBe('ask');
    expect(judgeCommand([{ tool: 'bash', match: 'git reset --hard', action: 'ask' }], 'git reset --soft HEAD~1')).toBe('allow');
    expect(judgeCommand([{ tool: 'bash', match: 'a b c', action: 'ask' }], 'a c b')).toBe('allow');
    expect(judgeCommand([{ tool: 'bash', match: 'a b c', action: 'ask' }], 'a x b y c')).toBe('ask');
  });

  it('takes the strictest matching action whatever the order of the rules', () => {
    const allowFirst: ApprovalRule[] = [
      { tool: '*', action: 'allow' },
      { tool: 'bash', match: 'rm', action: 'ask' },
      { tool: 'bash', match: 'git push', action: 'deny' },
    ];
    expect(judgeCommand(allowFirst, 'rm a.txt')).toBe('ask');
    expect(judgeCommand([...allowFirst].reverse(), 'rm a.txt')).toBe('ask');
    expect(judgeCommand(allowFirst, 'rm a.txt && git push origin')).toBe('deny');
    expect(judgeCommand(allowFirst, 'ls')).toBe('allow');
  });

  it('asks by default before installs, publishes, history rewrites and deletions, and nothing else', () => {
    for (const command of ['npm install x', 'npm ci', 'pip install requests', 'cargo publish', 'git reset --hard', 'git clean -fd', 'git rebase main', 'git checkout -- src/a.ts', 'git restore a.ts', 'rm a.txt']) {
      expect(judgeCommand(DEFAULT_APPROVAL_RULES, command), command).toBe('ask');
    }
    for (const command of ['ls -la', 'git status', 'git checkout main', 'npm test', 'cat a | grep b']) {
      expect(judgeCommand(DEFAULT_APPROVAL_RULES, command), command).toBe('allow');
    }
  });

  describe('another spelling of a command the defaults ask about asks too', () => {
    const project = tempDir('mada-rules-cwd-');
    writeFileSync(join(project, 'notes.txt'), 'local changes\n');
    const judgeHere = (command: string) =>
      new ApprovalRuleSet(DEFAULT_APPROVAL_RULES).judge('bash', { kind: 'commands', argvs: parsedArgvs('bash', command, '/home/u') ?? [], cwd: project }).action;

    it.each([
      // npm's aliases, typo aliases, unique abbreviations and camelCase (npm's own deref).
      'npm add left-pad', 'npm in left-pad', 'npm isntall left-pad', 'npm instal', 'npm --loglevel silly add x', 'npm clean-install',
      'npm ic', 'npm install-clean', 'npm install-cl', 'npm it', 'npm cit', 'npm installTest', 'npm publ', 'npm up', 'npm upgrade',
      // A package fetched and run: npm exec (npx) by any name, and npm init's initializers.
      'npm exec cowsay', 'npm x cowsay', 'npm exe -- cowsay', 'npm --yes exec cowsay', 'npm init react-app', 'npm create vite', 'npm innit',
      // pip by another name.
      'pip3 install requests', 'python -m pip install requests', 'python3 -Im pip install requests', 'python3 -mpip install x',
      'python3 --check-hash-based-pycs always -m pip install x',
      // pip's own check refuses these, but not through python -m: each fetches, and builds (runs) what it fetched.
      'python3 -m pip download -d dl requests', 'python3 -m pip wheel -w wh requests',
      // git options as git reads them: abbreviated, bundled, short for long.
      'git reset --har', 'git reset --ha HEAD~1', 'git -C . reset --hard', 'git checkout -f', 'git checkout -qf main', 'git checkout --forc',
      'git switch -f main', 'git switch --discard-changes main', 'git pull -r', 'git pull --rebase=merges origin',
      // git checkout of paths without `--`: a file here, a pathspec, a revision and paths.
      'git checkout notes.txt', 'git checkout .', 'git checkout HEAD notes.txt', "git checkout '*.txt'", 'git checkout :/', 'git checkout --pathspec-from-file=list.txt',
      // What lives in the repository, not the working tree: a checkpoint cannot give it back.
      'git stash drop', 'git stash drop stash@{1}', 'git stash clear', 'git branch -D feature', 'git branch -fd feature',
      'git branch --delete --force feature', 'git branch -d --force feature', 'git reflog expire --expire=now --all',
      // rm by git: the file goes, and with -f its staged content too.
      'git rm notes.txt', 'git rm -f notes.txt', 'git rm -rq src', 'git rm --cached notes.txt',
      // --merge throws staged changes away as --hard does.
      'git reset --merge', 'git reset --mer HEAD~1',
      // Tags have no reflog; pruning with a refspec of one's own deletes local branches and tags.
      'git tag -d v1', 'git tag --delete v1', 'git tag -fd v1', 'git tag --del v1 v2', 'git tag -f v1 HEAD~1', 'git tag -af -m msg v1',
      // A branch moved or copied over another takes its reflog with it, as -D does.
      'git branch -M old feature', 'git branch -mf old feature', 'git branch --move --force old feature', 'git branch -C old feature',
      'git branch -c -f old feature',
      "git fetch --prune . 'refs/nothing/*:refs/heads/*'", 'git fetch -p origin', 'git fetch -qp', 'git fetch -P origin',
      'git fetch --prune-tags origin', 'git pull -p', 'git pull --prune . x',
      // What changes a registry or an account: worse than a publish to undo.
      'npm unpublish foo', 'npm unpublish foo@1.0.0 --force', 'npm deprecate foo msg', 'npm undeprecate foo', 'npm dist-tag rm foo latest',
      'npm dist-tags add foo@1.0.0 beta', 'npm owner rm someone foo', 'npm author add someone foo', 'npm access set status=private @a/b',
      'npm team destroy @org:devs', 'npm org rm org someone', 'npm token revoke abc', 'npm star foo', 'npm unstar foo', 'npm profile enable-2fa',
      'npm adduser', 'npm add-user', 'npm login', 'npm logout', 'cargo yank foo@1.0.0', 'cargo owner --remove someone', 'cargo login',
      // Installs by another name: audit fix installs the fixes, link installs what it links, cargo add a crate the next build runs.
      'npm audit fix', 'npm audit fix --force', 'npm link', 'npm ln foo', 'cargo add serde', 'cargo +nightly add serde',
      // A shell command by another name (as `npm exec -c` is), and a cargo alias defined on the command line.
      'npm explore lodash -- rm -rf ../../src', 'npm explo lodash', `cargo --config 'alias.b2="install"' b2 ripgrep`, 'cargo --config=alias.x=publish x',
    ])('%s', (command) => expect(judgeHere(command)).toBe('ask'));

    it.each(['git stash', 'git stash list', 'git stash show -p', 'git stash pop', 'git branch -d merged', 'git branch feature', 'git branch -m old new', 'git branch -c old new', 'git branch -f feature main', 'git checkout main', 'git checkout -b feature', 'git switch main', 'git pull', 'git pull --no-rebase', 'git tag', 'git tag -l', 'git tag -n5 -l', 'git tag v2', "git tag -a -m 'drop -d' v2", 'git fetch', 'git fetch -j 4 origin main', 'git reset --soft HEAD~1', 'git reset notes.txt', 'git reset --keep HEAD~1', 'npm run build', 'npm run lint', 'npm test', 'npm ls', 'npm audit', 'npm view foo', 'npm pkg get name', 'cargo build', 'cargo test', 'python3 -m pytest', 'python3 -m pip list', 'python3 -m pip show pip', 'python3 script.py pip install'])(
      'and %s still runs without asking',
      (command) => expect(judgeHere(command)).toBe('allow'),
    );

    it('an operator rule written with an alias covers the other spellings', () => {
      const rules = [{ tool: 'bash', match: 'npm add', action: 'deny' } as const];
      expect(judgeCommand(rules, 'npm i left-pad')).toBe('deny');
      expect(judgeCommand([{ tool: 'bash', match: 'pip3 install', action: 'deny' }], 'python3 -m pip install x')).toBe('deny');
    });
  });

  describe('a glob is read as every word the rules name that it could expand to', () => {
    // The policy expands globs just before each command starts, so a file an earlier command made
    // (`touch ./--hard`, `touch drop`) turns `--h*` into `--hard` and `dro?` into `drop`.
    const judgeGlob = (command: string) => new ApprovalRuleSet(DEFAULT_APPROVAL_RULES).judge('bash', shellSubject('bash', command, '/home/u', '/nowhere')).action;

    it.each([
      'touch ./--hard && git reset --h*', 'git reset --har?', 'git reset -?', 'git stash dro?', 'touch drop && git stash d*', 'git r? -f notes.txt',
      'git st* dro?', 'git branch -q? feature', 'npm i* left-pad', 'npm isnt* left-pad', 'npm [i]nstall left-pad', 'python3 -m p?p install x',
      'git add * * * * *',
    ])('%s asks', (command) => expect(judgeGlob(command)).toBe('ask'));

    it.each(['ls *', 'ls * * * * *', 'cat *.txt', 'git add src/*.ts', 'git diff -- *.ts', 'git log --oneline src/*', 'npm run build -- src/*.ts', 'echo *'])(
      '%s still runs without asking',
      (command) => expect(judgeGlob(command)).toBe('allow'),
    );
  });

  it('judges file tools on the resolved absolute path with ** globs', () => {
    const rules = new ApprovalRuleSet([
      { tool: 'write_file', match: '/repo/**/.env*', action: 'ask' },
      { tool: 'write_file', match: '/repo/.github/**', action: 'deny' },
    ]);
    expect(rules.judge('write_file', { kind: 'path', path: '/repo/.env' }).action).toBe('ask');
    expect(rules.judge('write_file', { kind: 'path', path: '/repo/app/config/.env.local' }).action).toBe('ask');
    expect(rules.judge('write_file', { kind: 'path', path: '/repo/.github/workflows/ci.yml' }).action).toBe('deny');
    expect(rules.judge('write_file', { kind: 'path', path: '/repo/src/env.ts' }).action).toBe('allow');
    expect(rules.judge('edit_file', { kind: 'path', path: '/repo/.env' }).action).toBe('allow');
  });
});

describe('approval rule files', () => {
  const dir = tempDir('mada-rules-');
  const file = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };

  it('reads JSON and TOML of the same shape', () => {
    const rules = [{ tool: 'bash', match: 'npm publish', action: 'deny' }, { tool: 'web_search', action: 'ask' }];
    expect(readApprovalRulesFile(file('rules.json', JSON.stringify({ rules })))).toEqual(rules);
    const toml = '[[rules]]\ntool = "bash"\nmatch = "npm publish"\naction = "deny"\n\n[[rules]]\ntool = "web_search"\naction = "ask"\n';
    expect(readApprovalRulesFile(file('rules.toml', toml))).toEqual(rules);
  });

  it('names the bad rule by number and content', () => {
    const path = file('bad.json', JSON.stringify({ rules: [{ tool: 'bash', match: 'rm', action: 'ask' }, { tool: 'bash', match: 'rm', action: 'maybe' }] }));
    expect(() => readApprovalRulesFile(path)).toThrow(/^rule 2 \(\{"tool":"bash","match":"rm","action":"maybe"\}\): action: /);
    expect(() => readApprovalRulesFile(file('rel.json', JSON.stringify({ rules: [{ tool: 'write_file', match: '*.env', action: 'ask' }] })))).toThrow(
      /rule 1 .*: match: a file tool's glob must be an absolute path/,
    );
    expect(() => readApprovalRulesFile(file('shape.json', '{"rule": []}'))).toThrow(/must hold \{"rules": \[\.\.\.\]\}/);
    expect(() => readApprovalRulesFile(file('broken.toml', '[[rules]\n'))).toThrow(/does not parse/);
  });
});
