import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createGlobFilesTool } from '../../src/tools/glob-files.js';
import { createGrepContentTool } from '../../src/tools/grep-content.js';
import { ApprovalRuleSet, DEFAULT_APPROVAL_RULES, type ApprovalRule } from '../../src/tools/sandbox/command-policy/index.js';
import { bothBackends } from './search/backends.js';
import { createWorkspace, type Workspace } from './workspace.js';

let ws: Workspace;
beforeEach(async () => {
  ws = await createWorkspace();
  await ws.write('secret/key.txt', 'API_KEY=abc123\n');
  await ws.write('secret/deeper/more.txt', 'API_KEY=def456\n');
  await ws.write('src/app.ts', 'const API_KEY = process.env.API_KEY;\n');
});
afterEach(async () => {
  await ws.remove();
});

const withRules = (...rules: ApprovalRule[]) => ws.context({ approval: { rules: new ApprovalRuleSet([...DEFAULT_APPROVAL_RULES, ...rules]) } });

// A rule judges the path a call names; a search names a directory above the files it reads.
describe.each(bothBackends)('a search over a directory holding files the rules deny ($name backend)', (backend) => {
  const grep = createGrepContentTool(backend);
  const glob = createGlobFilesTool(backend);

  it.each([
    ['every tool', '*'],
    ['the search tool', 'SELF'],
  ])('leaves out the denied files when the rule names %s, and shows the others', async (_, named) => {
    const deny = (tool: string): ApprovalRule => ({ tool: named === 'SELF' ? tool : named, match: `${ws.root}/secret/**`, action: 'deny' });
    const found = await grep.execute(grep.parameters.parse({ pattern: 'API_KEY' }), withRules(deny('grep_content')));
    expect(found.data).toBe(`${ws.path('src/app.ts')}:1: const API_KEY = process.env.API_KEY;`);
    const listed = await glob.execute(glob.parameters.parse({ pattern: '**/*.txt' }), withRules(deny('glob_files')));
    expect(listed.data).toContain('No files found');
    const inside = await grep.execute(grep.parameters.parse({ pattern: 'API_KEY', path: 'secret' }), withRules(deny('grep_content')));
    expect(inside.data).toContain('No matches found');
  });

  it('shows the same files without the rule, and under a rule for another tool or an ask', async () => {
    const others: ApprovalRule[] = [
      { tool: 'read_file', match: `${ws.root}/secret/**`, action: 'deny' },
      { tool: 'grep_content', match: `${ws.root}/secret/**`, action: 'ask' },
    ];
    for (const context of [ws.context(), withRules(...others)]) {
      const found = await grep.execute(grep.parameters.parse({ pattern: 'API_KEY' }), context);
      expect(found.metadata).toMatchObject({ file_count: 3 });
    }
    const listed = await glob.execute(glob.parameters.parse({ pattern: '**/*.txt' }), ws.context());
    expect(listed.data.split('\n').sort()).toEqual([ws.path('secret/deeper/more.txt'), ws.path('secret/key.txt')]);
  });
});
