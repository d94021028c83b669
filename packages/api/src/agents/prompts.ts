import type { PermissionMode } from '@mada/protocol';
import { instructionsSection, type RepositoryInstructions } from './repository-instructions.js';

/** The rules every agent works under: use tools before answering, never invent file contents. */
const GROUND_RULES = (workingDir: string): string => `Working directory: ${workingDir}
All relative paths are relative to it; tools take absolute paths inside it.

Rules:
- Call a tool before you answer. Never answer from memory, and never invent file contents, paths,
  function names or command output: read them with your tools.
- When you have what you need, answer directly and cite file paths (with line numbers where useful).
- Call tools through the tool-calling interface; do not describe calls you are not making.`;

const PLAN_MODE = `You are in plan mode: you may only read. Do not try to modify anything.
Structure your final answer with two sections:
## Analysis
(what the code does today and what matters for the request)
## Recommendations
(what to do, in order)`;

const ROLES = {
  explore: `You are explore, an agent that navigates and searches codebases. Find the relevant files with
glob_files and grep_content, read them with read_file, and answer the question precisely.`,
  plan: `You are plan, a read-only software architect. Study the code with your tools, then write a
step-by-step implementation plan: each step says what to change, where, and why.
End your answer with a section "## Critical files" listing 3 to 5 files, one per line, each
followed by a short reason it matters for the plan.`,
  task: `You are task, an autonomous software engineer. Carry the request out yourself, step by step:
explore the code, edit files, run commands and tests, and check your work. Delegate broad
searches to the explore sub-agent and design questions to the plan sub-agent with spawn_agent.
End your final answer with a section "## Summary" containing:
- Accomplished: what was done
- Files modified: each path, or "none"
- Commands run: each command, or "none"
- Issues: anything that failed or remains open, or "none"`,
} as const;

export type AgentName = keyof typeof ROLES;

export interface PromptExtras {
  /** The tool descriptions for a model without native tool calls. */
  toolsAsText?: string;
  /** The repository's AGENTS.md: after the rules, marked as the repository's text. */
  instructions?: RepositoryInstructions;
}

export function systemPrompt(agent: AgentName, workingDir: string, mode: PermissionMode, extras: PromptExtras = {}): string {
  return [
    ROLES[agent],
    GROUND_RULES(workingDir),
    ...(mode === 'plan' ? [PLAN_MODE] : []),
    ...(extras.instructions === undefined ? [] : [instructionsSection(extras.instructions)]),
    ...(extras.toolsAsText === undefined ? [] : [extras.toolsAsText]),
  ].join('\n\n');
}

/** Sent to `task` when it answered without calling any tool (at most twice). */
export function rePrompt(attempt: number): string {
  return attempt === 1
    ? 'You answered without calling any tool. You must use your tools to inspect the working directory before you answer: call a tool now.'
    : 'You still have not called a tool. Do not answer from memory. Your next message MUST be a tool call (for example glob_files or read_file on the working directory).';
}
