import { readFileSync } from 'node:fs';
import { parse as parseToml } from 'smol-toml';
import { z } from 'zod';
import { compileNameGlob } from '../../../util/name-glob.js';
import { compilePathGlob, type ApprovalRule } from './approval-rules.js';

const Rule = z.strictObject({
  // MCP tools by name or by a glob on their names (`mcp__github__*`).
  tool: z.string().regex(/^(\*|[a-z_]+|mcp__[A-Za-z0-9_*?-]{1,128})$/, 'expected a tool name, mcp__<server>__<tool> (globs allowed) or *'),
  match: z.string().trim().min(1).optional(),
  action: z.enum(['allow', 'ask', 'deny']),
});
const RuleFile = z.strictObject({ rules: z.array(z.unknown()) });

const SHELL_TOOLS: readonly string[] = ['bash', 'bash_readonly'];

/**
 * Reads APPROVAL_RULES_FILE: `{"rules": [...]}` in JSON, or `[[rules]]` tables in TOML (by the
 * `.toml` extension). Throws an Error whose message names the bad rule by number and content.
 */
export function readApprovalRulesFile(path: string): ApprovalRule[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let document: unknown;
  try {
    document = path.toLowerCase().endsWith('.toml') ? parseToml(text) : JSON.parse(text);
  } catch (error) {
    throw new Error(`${path} does not parse: ${(error as Error).message.split('\n')[0]}`);
  }
  const file = RuleFile.safeParse(document);
  if (!file.success) throw new Error(`${path} must hold {"rules": [...]} (TOML: [[rules]] tables)`);
  return file.data.rules.map((raw, i) => checkRule(raw, i + 1));
}

function checkRule(raw: unknown, number: number): ApprovalRule {
  const name = `rule ${number} (${JSON.stringify(raw)})`;
  const parsed = Rule.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${name}: ${issue.path.join('.') || 'rule'}: ${issue.message}`);
  }
  const rule: ApprovalRule = { tool: parsed.data.tool, action: parsed.data.action, ...(parsed.data.match ? { match: parsed.data.match } : {}) };
  if (rule.match !== undefined && rule.tool.startsWith('mcp__')) throw new Error(`${name}: match: a rule for MCP tools names them by \`tool\` alone`);
  if (rule.tool.startsWith('mcp__')) {
    try {
      compileNameGlob(rule.tool);
    } catch (error) {
      throw new Error(`${name}: tool: ${(error as Error).message}`);
    }
  }
  if (rule.match !== undefined && !SHELL_TOOLS.includes(rule.tool)) {
    if (rule.tool !== '*' && !rule.match.startsWith('/')) throw new Error(`${name}: match: a file tool's glob must be an absolute path`);
    try {
      compilePathGlob(rule.match);
    } catch (error) {
      throw new Error(`${name}: match: ${(error as Error).message}`);
    }
  }
  return rule;
}
