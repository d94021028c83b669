import type { PermissionMode } from '@mada/protocol';
import type { ApprovalRuleSet, CallSubject, RuleVerdict } from '../tools/sandbox/command-policy/index.js';

/**
 * The security decision for one tool call (EXTENSIONS.md sections 3 and 4), as a pure function of
 * what was gathered about the call: no file system, no clock, no state. The executor and
 * `npm run policy` both ask it, so what an operator sees is what a run does.
 */
export interface PolicyCall {
  tool: string;
  /** What the rules judge: the parsed commands of a shell call, the resolved path of a file tool. */
  subject: CallSubject;
  /** The tool changes files (write_file, edit_file, bash): a change outside the working directory asks. */
  changesFiles: boolean;
  /** The tools the agent is offered in the run's mode (agents/definitions.ts); any other is denied. */
  offered: readonly string[];
  /** Why the call asks unless a rule allows it by name (an MCP tool not marked read-only); absent: it does not. */
  asksUnlessAllowed?: string;
}

/** Where a call acts, as the policy resolves it: what an approval grant covers, and what a revert undoes. */
export interface CallScope {
  /**
   * Every real path the call acts on, for the scope of an approve_always grant; undefined when the
   * policy cannot tell (it refuses the command, or a program runs code that can touch any path).
   */
  reach: string[] | undefined;
  /**
   * Why it may change a file outside the run's working directory, which the run's checkpoint does
   * not hold (EXTENSIONS.md section 4); undefined when it changes nothing there or the tool refuses it.
   */
  outside: string | undefined;
}

export type Decision =
  | {
      action: 'allow';
      reasons: string[];
      /** The call may change files inside the run's working directory only (checked again as each command starts). */
      confined: boolean;
    }
  | {
      action: 'ask';
      reasons: string[];
      /** The deciding rules' matches, which an approve_always grant covers (none when only the scope asked). */
      matches: string[];
      /** Every real path the call acts on; undefined when unknown, and then no grant covers it. */
      reach: string[] | undefined;
      /** Once approved, changes stay inside the working directory. */
      confined: boolean;
    }
  | { action: 'deny'; reasons: string[] };

/** A decision reached before the call's scope matters, or the rules' verdict that the scope must complete. */
type Stage = { decided: Decision } | { verdict: RuleVerdict };

function beforeScope(call: PolicyCall, mode: PermissionMode, rules: ApprovalRuleSet): Stage {
  if (!call.offered.includes(call.tool)) {
    return { decided: { action: 'deny', reasons: [`${call.tool} is not offered in mode ${mode} (offered: ${call.offered.join(', ')})`] } };
  }
  const verdict = rules.judge(call.tool, call.subject);
  if (verdict.action === 'deny') return { decided: { action: 'deny', reasons: [verdict.reason] } };
  if (mode === 'auto_accept') return { decided: { action: 'allow', reasons: [verdict.reason, 'mode auto_accept runs every call no rule denies'], confined: false } };
  if (call.asksUnlessAllowed !== undefined && !(verdict.action === 'allow' && verdict.rules.length > 0)) {
    const asking = verdict.action === 'ask' ? verdict : undefined;
    const reasons = [asking?.reason, call.asksUnlessAllowed].filter((text) => text !== undefined);
    // No rule asked, the tool did: a grant covers it as an allow rule naming it would (match '': the tool by name).
    return { decided: { action: 'ask', reasons, matches: asking?.rules.map((rule) => rule.match ?? '') ?? [''], reach: undefined, confined: false } };
  }
  // An operator's allow rule that names the call lets it change files anywhere the policy lets it.
  if (verdict.action === 'allow' && (!call.changesFiles || verdict.rules.length > 0)) return { decided: { action: 'allow', reasons: [verdict.reason], confined: false } };
  return { verdict };
}

/**
 * Whether `decide` needs the call's scope: only for a call that may ask (gathering it runs the
 * command policy, which a call the rules decide alone need not pay for).
 */
export const needsScope = (call: PolicyCall, mode: PermissionMode, rules: ApprovalRuleSet): boolean => 'verdict' in beforeScope(call, mode, rules);

/**
 * allow, ask or deny, with the reasons. In order: a tool the mode does not offer is denied; a
 * `deny` rule denies in every mode; `auto_accept` runs the rest; a tool that asks unless allowed
 * (an MCP tool not marked read-only) asks unless an `allow` rule names it; `plan` is judged as `default` is
 * (a mode that takes tools away must not also lift the operator's rules); an `allow` rule that
 * names the call allows it; a call that may change files outside the working directory asks (a
 * revert would not undo it), as does an `ask` rule. `scope` is required when `needsScope` says so.
 */
export function decide(call: PolicyCall, mode: PermissionMode, rules: ApprovalRuleSet, scope?: CallScope): Decision {
  const stage = beforeScope(call, mode, rules);
  if ('decided' in stage) return stage.decided;
  if (scope === undefined) throw new Error(`the decision on ${call.tool} needs the call's scope`);
  const { verdict } = stage;
  const confined = call.changesFiles && scope.outside === undefined;
  if (verdict.action === 'allow' && scope.outside === undefined) {
    return { action: 'allow', reasons: [verdict.reason, ...(confined ? ['it changes files inside the working directory only'] : [])], confined };
  }
  const asking = verdict.action === 'ask' ? verdict : undefined;
  return {
    action: 'ask',
    reasons: [asking?.reason, scope.outside].filter((text) => text !== undefined),
    matches: asking?.rules.map((rule) => rule.match ?? '') ?? [],
    reach: scope.reach,
    confined,
  };
}
