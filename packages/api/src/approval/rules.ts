/**
 * Approval rules (SPEC.md section 2, "Approval scaffolding"): per-tool rules matching argument
 * patterns. No endpoint asks a person yet; in mode `default` a `deny` refuses the call and an
 * `ask` is allowed and reported in a `thinking` event, ready for a future approval channel.
 */
export type ApprovalAction = 'allow' | 'deny' | 'ask';
export type ApprovalStatus = 'pending' | 'approved' | 'denied';

export interface ApprovalRule {
  /** Tool name, or `*` for every tool. */
  tool: string;
  /** Argument whose text is matched; absent: the rule matches on the tool name alone. */
  argument?: string;
  /** Regular expression tested against the argument's text. */
  pattern?: RegExp;
  action: ApprovalAction;
  reason: string;
}

export interface ApprovalDecision {
  action: ApprovalAction;
  reason: string;
}

/** Safe patterns allowed, dangerous ones asked or denied. First match wins. */
export const DEFAULT_APPROVAL_RULES: readonly ApprovalRule[] = [
  { tool: 'bash', argument: 'command', pattern: /\bgit\s+push\b.*\s(--force\b|-f\b|--force-with-lease\b)/, action: 'deny', reason: 'force-pushing rewrites shared history' },
  { tool: 'bash', argument: 'command', pattern: /\bnpm\s+publish\b|\bcargo\s+publish\b/, action: 'deny', reason: 'publishing a package is not an agent decision' },
  { tool: 'bash', argument: 'command', pattern: /\bgit\s+(push|reset\s+--hard|clean\b|rebase\b)/, action: 'ask', reason: 'changes shared or uncommitted history' },
  { tool: 'bash', argument: 'command', pattern: /(^|[|;&\s])rm\s/, action: 'ask', reason: 'deletes files' },
  { tool: 'bash', argument: 'command', pattern: /\b(pip3?|npm)\s+(install|i|ci|uninstall)\b/, action: 'ask', reason: 'installs or removes packages' },
  { tool: 'write_file', argument: 'file_path', pattern: /(^|\/)\.env(\.|$)|(^|\/)\.github\/workflows\//, action: 'ask', reason: 'writes secrets or CI configuration' },
  { tool: 'edit_file', argument: 'file_path', pattern: /(^|\/)\.env(\.|$)|(^|\/)\.github\/workflows\//, action: 'ask', reason: 'edits secrets or CI configuration' },
  { tool: '*', action: 'allow', reason: 'no rule objects' },
];

export function evaluateApproval(
  tool: string,
  args: Record<string, unknown>,
  rules: readonly ApprovalRule[] = DEFAULT_APPROVAL_RULES,
): ApprovalDecision {
  for (const rule of rules) {
    if (rule.tool !== '*' && rule.tool !== tool) continue;
    if (rule.argument !== undefined) {
      const value = args[rule.argument];
      if (typeof value !== 'string' || !(rule.pattern?.test(value) ?? true)) continue;
    }
    return { action: rule.action, reason: rule.reason };
  }
  return { action: 'allow', reason: 'no rule matched' };
}
