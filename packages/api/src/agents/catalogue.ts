import type { AgentInfo, AgentType } from '@mada/protocol';

/** What each agent is for, as clients list it. The engine's definitions reuse these texts. */
export const AGENT_CATALOGUE: Record<AgentType, AgentInfo> = {
  explore: {
    name: 'explore',
    description:
      'Navigates and searches a codebase: finds files, reads code and answers questions about how it works. Read-only.',
  },
  plan: {
    name: 'plan',
    description:
      'Read-only software architect: studies the code and writes a step-by-step implementation plan ending with the critical files.',
  },
  task: {
    name: 'task',
    description:
      'Autonomous multi-step worker: edits files, runs commands, searches the web and delegates to explore and plan sub-agents.',
  },
};

export function findAgentInfo(name: string): AgentInfo | undefined {
  return Object.hasOwn(AGENT_CATALOGUE, name) ? AGENT_CATALOGUE[name as AgentType] : undefined;
}
