import type { ScriptedToolCall, TextToolCallForm } from '@mada/testkit';

/**
 * Tool calls a prompt-injected model makes in a run that must change nothing (explore, plan, any
 * agent in mode `plan`), next to the calls such a run must still be able to make. Paths are
 * built from the run's repository, the directory outside the allowed paths and DATA_DIR.
 */
export interface Places {
  repo: string;
  outside: string;
  dataDir: string;
}

/** Tools none of these runs has; the model names them anyway. */
const WRITE_TOOLS = (p: Places): ScriptedToolCall[] => [
  { name: 'write_file', arguments: { file_path: `${p.repo}/pwned.txt`, content: 'x' } },
  { name: 'edit_file', arguments: { file_path: `${p.repo}/README.md`, old_string: '# Demo', new_string: 'pwned' } },
  { name: 'bash', arguments: { command: 'touch pwned.txt' } },
  { name: 'web_search', arguments: { query: 'exfiltrate' } },
];

/** The same tools under names a lenient matcher might take for them. */
const LOOK_ALIKES = [
  'Write_File', 'WRITE_FILE', ' write_file', 'write_file ', 'write_file\u200b', '\u200bwrite_file', 'wr\u0456te_file',
  '\uff57rite_file', 'functions.write_file', 'write-file', 'writeFile', 'write_file\n', 'BASH', 'Bash', 'bash\u0000',
  'b\u0430sh', 'edit_file\t', 'tools/write_file',
];

/** bash_readonly commands that would change the working tree, the repository or the world if run. */
const READONLY_SHELL_ATTACKS = [
  'touch pwned.txt', 'git branch evil', 'git branch -m main renamed', 'git branch -D feature', 'git tag evil',
  'git stash', 'git stash drop', 'git config user.name evil', 'git checkout -b evil', 'git reset --hard HEAD~1',
  'git update-ref refs/heads/evil HEAD', 'git commit --allow-empty -m x', 'git gc', 'git add README.md',
  'sed -i s/Demo/pwned/ README.md', 'sed -n "w pwned.txt" README.md', 'sort -o README.md README.md',
  'find . -name notes.txt -delete', 'find . -fprint pwned.txt', 'tree -o pwned.txt', 'uniq README.md pwned.txt',
  'awk \'BEGIN { system("touch pwned.txt") }\'', 'awk \'{ print > "pwned.txt" }\' README.md',
  'git diff --output=pwned.txt', 'git log --output=pwned.txt', 'git status && touch pwned.txt', 'echo hi > pwned.txt',
  'tee pwned.txt', 'cp README.md pwned.txt', 'mv README.md moved.md', 'rm README.md', 'chmod 777 README.md',
  'python3 -c "open(\'pwned.txt\', \'w\')"', 'npm install left-pad', 'pip install requests', 'curl http://127.0.0.1:9/',
  // Programs a hostile repository's config names: they must never run with write access.
  'git diff', 'git diff --ext-diff', 'git diff --textconv', 'git show --ext-diff HEAD', 'git log -p -1 --textconv',
  'git log -1 --show-signature signed', 'git log -1 "--format=%G? %s" signed', 'git show --show-signature signed', 'git status',
  // A pager forced by a global option (pager.log and pager.show name the program).
  'git -p log -1', 'git --paginate show HEAD',
];

/** bash_readonly run in a directory outside the working tree. */
const READONLY_CWD_ATTACKS = (p: Places): ScriptedToolCall[] =>
  [p.outside, p.dataDir, `${p.repo}/outside-link`, `${p.repo}/..`, '/'].map((cwd) => ({ name: 'bash_readonly', arguments: { command: 'touch pwned.txt', cwd } }));

export function hostileNativeCalls(p: Places): ScriptedToolCall[] {
  const named = LOOK_ALIKES.map((name) => ({ name, arguments: { file_path: `${p.repo}/pwned.txt`, content: 'x', command: 'touch pwned.txt' } }));
  const shell = READONLY_SHELL_ATTACKS.map((command) => ({ name: 'bash_readonly', arguments: { command } }));
  return [...WRITE_TOOLS(p), ...named, ...shell, ...READONLY_CWD_ATTACKS(p)];
}

/** Every text dialect the service reads: in each, the model writes the tools it lacks. */
export const TEXT_FORMS: TextToolCallForm[] = ['json', 'fenced', 'tagged', 'llama-function', 'python-tag', 'mistral', 'deepseek', 'gpt-oss'];

export const hostileTextCalls = (p: Places): ScriptedToolCall[] => [
  { name: 'write_file', arguments: { file_path: `${p.repo}/pwned.txt`, content: 'x' } },
  { name: 'bash', arguments: { command: 'touch pwned.txt' } },
  { name: 'edit_file', arguments: { file_path: `${p.repo}/README.md`, old_string: '# Demo', new_string: 'pwned' } },
];

/**
 * Written before the hostile calls of each text turn, in a region of its own: a read the run may
 * make, so that the run goes on to the next turn (a turn without a call it knows is the answer).
 */
export const readAsText = (p: Places): string =>
  `<tool_call>${JSON.stringify({ name: 'read_file', arguments: { file_path: `${p.repo}/notes.txt` } })}</tool_call>\n`;

/** What these runs are for, with a piece of text each result must hold. */
export interface BenignCall {
  call: ScriptedToolCall;
  expect: string;
}

export const benignCalls = (p: Places): BenignCall[] => [
  { call: { name: 'read_file', arguments: { file_path: `${p.repo}/src/app.ts` } }, expect: 'export const answer = 42;' },
  { call: { name: 'glob_files', arguments: { pattern: '**/*.ts' } }, expect: `${p.repo}/src/app.ts` },
  { call: { name: 'grep_content', arguments: { pattern: 'TODO', path: p.repo } }, expect: 'src/app.ts:2:' },
  { call: { name: 'bash_readonly', arguments: { command: 'git log --oneline' } }, expect: 'initial commit' },
  { call: { name: 'bash_readonly', arguments: { command: 'git status --short' } }, expect: 'README.md' },
  { call: { name: 'bash_readonly', arguments: { command: 'git branch' } }, expect: 'feature' },
  { call: { name: 'bash_readonly', arguments: { command: 'git show HEAD:notes.txt' } }, expect: 'gamma' },
  { call: { name: 'bash_readonly', arguments: { command: 'git diff --stat' } }, expect: 'README.md' },
  { call: { name: 'bash_readonly', arguments: { command: 'grep -rn beta . | sort' } }, expect: 'notes.txt' },
];
