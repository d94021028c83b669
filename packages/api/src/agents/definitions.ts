import type { AgentType, PermissionMode } from '@mada/protocol';
import { AGENT_CATALOGUE } from './catalogue.js';

const READ_ONLY = ['read_file', 'glob_files', 'grep_content', 'bash_readonly'] as const;
const ALL = [...READ_ONLY, 'edit_file', 'write_file', 'bash', 'web_search', 'spawn_agent'] as const;

export interface AgentDefinition {
  name: AgentType;
  description: string;
  /** `chunk` frames (explore, plan) or `response` events (task) for streamed text. */
  textEvent: 'chunk' | 'response';
  /** Re-prompted (at most twice) when it answers without having called a tool. */
  requiresToolUse: boolean;
  toolNames(mode: PermissionMode): readonly string[];
}

/** Tools per agent and mode (docs/api.md, "Agents and tools"); explore is read-only. */
export const AGENTS: Record<AgentType, AgentDefinition> = {
  explore: {
    ...AGENT_CATALOGUE.explore,
    name: 'explore',
    textEvent: 'chunk',
    requiresToolUse: false,
    toolNames: () => READ_ONLY,
  },
  plan: {
    ...AGENT_CATALOGUE.plan,
    name: 'plan',
    textEvent: 'chunk',
    requiresToolUse: false,
    toolNames: () => READ_ONLY,
  },
  task: {
    ...AGENT_CATALOGUE.task,
    name: 'task',
    textEvent: 'response',
    requiresToolUse: true,
    toolNames: (mode) => (mode === 'plan' ? [...READ_ONLY, 'spawn_agent'] : ALL),
  },
};

export function findAgent(name: string): AgentDefinition | undefined {
  return Object.hasOwn(AGENTS, name) ? AGENTS[name as AgentType] : undefined;
}
