import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { decide, type PolicyCall } from '../../src/agents/decide.js';
import { ApprovalRuleSet, readApprovalRulesFile, type ApprovalRule } from '../../src/tools/sandbox/command-policy/index.js';
import { outsideDir } from './support.js';

const TOOL = 'mcp__github__create_issue';
const call = (asks: boolean): PolicyCall => ({
  tool: TOOL,
  subject: { kind: 'other' },
  changesFiles: false,
  offered: [TOOL],
  ...(asks ? { asksUnlessAllowed: `${TOOL} is not marked read-only by its MCP server` } : {}),
});
const rules = (...list: ApprovalRule[]) => new ApprovalRuleSet(list);

describe('approval rules for MCP tools', () => {
  it('reads rules naming MCP tools by name or glob, and refuses a match on them', () => {
    const file = join(outsideDir('mada-mcp-rules-'), 'rules.json');
    writeFileSync(file, JSON.stringify({ rules: [{ tool: 'mcp__github__*', action: 'allow' }, { tool: TOOL, action: 'deny' }] }));
    expect(readApprovalRulesFile(file)).toHaveLength(2);
    writeFileSync(file, JSON.stringify({ rules: [{ tool: 'mcp__github__*', match: '/x', action: 'allow' }] }));
    expect(() => readApprovalRulesFile(file)).toThrow(/a rule for MCP tools names them by `tool` alone/);
    writeFileSync(file, JSON.stringify({ rules: [{ tool: 'mcp__git hub', action: 'allow' }] }));
    expect(() => readApprovalRulesFile(file)).toThrow(/expected a tool name/);
  });

  it('asks in default mode before a tool not marked read-only, unless an allow rule names it', () => {
    expect(decide(call(true), 'default', rules())).toMatchObject({ action: 'ask', reasons: [`${TOOL} is not marked read-only by its MCP server`] });
    expect(decide(call(true), 'plan', rules())).toMatchObject({ action: 'ask' });
    expect(decide(call(true), 'default', rules({ tool: 'mcp__github__*', action: 'allow' }))).toMatchObject({ action: 'allow' });
    expect(decide(call(true), 'default', rules({ tool: 'mcp__gitlab__*', action: 'allow' }))).toMatchObject({ action: 'ask' });
    // A server's rule covers its own tools only: `mcp__git__*` is not server "github"'s, nor is a name of another case.
    expect(decide(call(true), 'default', rules({ tool: 'mcp__git__*', action: 'allow' }))).toMatchObject({ action: 'ask' });
    expect(decide(call(true), 'default', rules({ tool: 'mcp__GitHub__*', action: 'allow' }))).toMatchObject({ action: 'ask' });
    expect(decide(call(true), 'auto_accept', rules())).toMatchObject({ action: 'allow' });
    expect(decide(call(true), 'auto_accept', rules({ tool: 'mcp__*', action: 'deny' }))).toMatchObject({ action: 'deny' });
    expect(decide(call(false), 'default', rules())).toMatchObject({ action: 'allow' });
    expect(decide(call(false), 'default', rules({ tool: 'mcp__github__create_?ssue', action: 'ask' }), { reach: undefined, outside: undefined })).toMatchObject({ action: 'ask' });
  });
});
