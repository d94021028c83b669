import type { PermissionMode } from '@mada/protocol';
import { describe, expect, it } from 'vitest';
import { decide, needsScope, type CallScope, type Decision, type PolicyCall } from '../../src/agents/decide.js';
import { ApprovalRuleSet, DEFAULT_APPROVAL_RULES, shellSubject, type ApprovalRule } from '../../src/tools/sandbox/command-policy/index.js';

const ALL_TOOLS = ['read_file', 'glob_files', 'grep_content', 'bash_readonly', 'edit_file', 'write_file', 'bash', 'web_search', 'spawn_agent'];
const PLAN_TOOLS = ['read_file', 'glob_files', 'grep_content', 'bash_readonly', 'spawn_agent'];
const OUT = "rm changes /srv/b/x, outside the run's working directory /srv/a: reverting this run will not undo it";
const WRITE_OUT = "write_file changes /srv/b/x, outside the run's working directory /srv/a: reverting this run will not undo it";

const bash = (command: string, offered = ALL_TOOLS): PolicyCall => ({ tool: 'bash', subject: shellSubject('bash', command, '/home/u'), changesFiles: true, offered });
const readonly = (command: string, offered = ALL_TOOLS): PolicyCall => ({ tool: 'bash_readonly', subject: shellSubject('bash_readonly', command, '/home/u'), changesFiles: false, offered });
const file = (tool: string, path: string, offered = ALL_TOOLS): PolicyCall => ({ tool, subject: { kind: 'path', path }, changesFiles: ['write_file', 'edit_file'].includes(tool), offered });
const inside: CallScope = { reach: ['/srv/a', '/srv/a/x'], outside: undefined };
const outside: CallScope = { reach: ['/srv/a', '/srv/b/x'], outside: OUT };
const unknownReach: CallScope = { reach: undefined, outside: undefined };

const rule = (tool: string, match: string | undefined, action: ApprovalRule['action']): ApprovalRule => ({ tool, action, ...(match === undefined ? {} : { match }) });
const DEFAULTS = DEFAULT_APPROVAL_RULES;
const SECRETS = [rule('read_file', '/srv/a/secrets/**', 'deny')];
const OPERATOR_ALLOWS_RM = [...DEFAULTS, rule('bash', 'rm', 'allow')];
const DENY_EVERYTHING = [rule('*', undefined, 'deny')];

interface Row {
  name: string;
  call: PolicyCall;
  mode: PermissionMode;
  rules: readonly ApprovalRule[];
  /** What the executor gathered: undefined when the rules and mode decide alone. */
  scope: CallScope | undefined;
  decision: Decision;
}

const TABLE: Row[] = [
  // Mode confinement: what the mode does not offer is denied before any rule is read.
  { name: 'bash in plan', call: bash('ls', PLAN_TOOLS), mode: 'plan', rules: DEFAULTS, scope: undefined,
    decision: { action: 'deny', reasons: [`bash is not offered in mode plan (offered: ${PLAN_TOOLS.join(', ')})`] } },
  { name: 'write_file in plan', call: file('write_file', '/srv/a/x', PLAN_TOOLS), mode: 'plan', rules: DEFAULTS, scope: undefined,
    decision: { action: 'deny', reasons: [`write_file is not offered in mode plan (offered: ${PLAN_TOOLS.join(', ')})`] } },
  { name: 'bash_readonly in plan, no rule', call: readonly('git status', PLAN_TOOLS), mode: 'plan', rules: DEFAULTS, scope: undefined,
    decision: { action: 'allow', reasons: ['no rule matched'], confined: false } },

  // deny rules hold in every mode.
  { name: 'read_file of a denied path', call: file('read_file', '/srv/a/secrets/key'), mode: 'default', rules: SECRETS, scope: undefined,
    decision: { action: 'deny', reasons: ['approval rule read_file "/srv/a/secrets/**" (deny)'] } },
  { name: 'read_file of a denied path in auto_accept', call: file('read_file', '/srv/a/secrets/key'), mode: 'auto_accept', rules: SECRETS, scope: undefined,
    decision: { action: 'deny', reasons: ['approval rule read_file "/srv/a/secrets/**" (deny)'] } },
  { name: 'read_file of a denied path in plan', call: file('read_file', '/srv/a/secrets/key', PLAN_TOOLS), mode: 'plan', rules: SECRETS, scope: undefined,
    decision: { action: 'deny', reasons: ['approval rule read_file "/srv/a/secrets/**" (deny)'] } },
  { name: 'read_file beside the denied path', call: file('read_file', '/srv/a/src/key'), mode: 'default', rules: SECRETS, scope: undefined,
    decision: { action: 'allow', reasons: ['no rule matched'], confined: false } },
  { name: 'a * deny rule over a write the scope would let run', call: file('write_file', '/srv/a/x'), mode: 'auto_accept', rules: DENY_EVERYTHING, scope: undefined,
    decision: { action: 'deny', reasons: ['approval rule * (deny)'] } },

  // ask rules: asked in default and plan, run at once in auto_accept.
  { name: 'npm install', call: bash('npm install left-pad'), mode: 'default', rules: DEFAULTS, scope: inside,
    decision: { action: 'ask', reasons: ['approval rule bash "npm install" (ask)'], matches: ['npm install'], reach: inside.reach, confined: true } },
  { name: 'npm i, read as npm install', call: bash('npm i left-pad'), mode: 'default', rules: DEFAULTS, scope: inside,
    decision: { action: 'ask', reasons: ['approval rule bash "npm install" (ask)'], matches: ['npm install'], reach: inside.reach, confined: true } },
  { name: 'git reset --hard, second of a list', call: bash('true && git reset --hard'), mode: 'default', rules: DEFAULTS, scope: unknownReach,
    decision: { action: 'ask', reasons: ['approval rule bash "git reset --hard" (ask)'], matches: ['git reset --hard'], reach: undefined, confined: true } },
  { name: 'npm install in auto_accept', call: bash('npm install left-pad'), mode: 'auto_accept', rules: DEFAULTS, scope: undefined,
    decision: { action: 'allow', reasons: ['approval rule bash "npm install" (ask)', 'mode auto_accept runs every call no rule denies'], confined: false } },
  { name: 'an ask rule on bash_readonly in plan', call: readonly('git log', PLAN_TOOLS), mode: 'plan', rules: [rule('bash_readonly', 'git log', 'ask')], scope: unknownReach,
    decision: { action: 'ask', reasons: ['approval rule bash_readonly "git log" (ask)'], matches: ['git log'], reach: undefined, confined: false } },
  { name: 'the strictest of the matching rules', call: bash('rm x'), mode: 'default', rules: [rule('bash', 'rm', 'allow'), rule('*', undefined, 'ask')], scope: inside,
    decision: { action: 'ask', reasons: ['approval rule * (ask)'], matches: [''], reach: inside.reach, confined: true } },

  // Changes outside the working directory ask, as an ask rule does, unless an allow rule names the call.
  { name: 'bash that changes inside only', call: bash('touch x'), mode: 'default', rules: DEFAULTS, scope: inside,
    decision: { action: 'allow', reasons: ['no rule matched', 'it changes files inside the working directory only'], confined: true } },
  { name: 'rm outside: the rule and the scope both ask', call: bash('rm ../b/x'), mode: 'default', rules: DEFAULTS, scope: outside,
    decision: { action: 'ask', reasons: ['approval rule bash "rm" (ask)', OUT], matches: ['rm'], reach: outside.reach, confined: false } },
  { name: 'rm outside in plan is judged as in default', call: bash('rm ../b/x'), mode: 'plan', rules: DEFAULTS, scope: outside,
    decision: { action: 'ask', reasons: ['approval rule bash "rm" (ask)', OUT], matches: ['rm'], reach: outside.reach, confined: false } },
  { name: 'write_file outside, no rule', call: file('write_file', '/srv/b/x'), mode: 'default', rules: DEFAULTS, scope: { reach: ['/srv/b/x'], outside: WRITE_OUT },
    decision: { action: 'ask', reasons: [WRITE_OUT], matches: [], reach: ['/srv/b/x'], confined: false } },
  { name: 'write_file outside in auto_accept', call: file('write_file', '/srv/b/x'), mode: 'auto_accept', rules: DEFAULTS, scope: undefined,
    decision: { action: 'allow', reasons: ['no rule matched', 'mode auto_accept runs every call no rule denies'], confined: false } },
  { name: "rm outside under an operator's allow rule beside the defaults' ask", call: bash('rm ../b/x'), mode: 'default', rules: OPERATOR_ALLOWS_RM, scope: outside,
    decision: { action: 'ask', reasons: ['approval rule bash "rm" (ask)', OUT], matches: ['rm'], reach: outside.reach, confined: false } },
  { name: 'a read outside never asks', call: readonly('cat ../b/x'), mode: 'default', rules: DEFAULTS, scope: undefined,
    decision: { action: 'allow', reasons: ['no rule matched'], confined: false } },
];

describe('decide: the security decision on one tool call', () => {
  it.each(TABLE)('$name ($mode)', ({ call, mode, rules, scope, decision }) => {
    const set = new ApprovalRuleSet(rules);
    expect(needsScope(call, mode, set), 'whether the scope is gathered').toBe(scope !== undefined);
    expect(decide(call, mode, set, scope)).toEqual(decision);
  });

  it("lets an operator's allow rule run a change outside the working directory without asking", () => {
    const set = new ApprovalRuleSet([rule('bash', 'rm', 'allow')]);
    const call = bash('rm ../b/x');
    expect(needsScope(call, 'default', set)).toBe(false);
    expect(decide(call, 'default', set)).toEqual({ action: 'allow', reasons: ['approval rule bash "rm" (allow)'], confined: false });
  });

  it('refuses to decide a call that may ask without its scope', () => {
    expect(() => decide(bash('rm x'), 'default', new ApprovalRuleSet(DEFAULTS))).toThrow(/needs the call's scope/);
  });
});
