import { z } from 'zod';
import { UnknownAgentError } from '../errors.js';
import { fail, succeed, type Tool } from './tool.js';
import { errorMessage } from '../util/error-message.js';
import { infrastructureFailure } from './infrastructure-failure.js';

const SPAWNABLE = ['explore', 'plan'];

const START_PROMPT_WIDTH = 50;

/** The prompt as `tool_start` shows it: 50 characters plus `...` when longer. */
function startPrompt(prompt: string): string {
  return prompt.length > START_PROMPT_WIDTH ? `${prompt.slice(0, START_PROMPT_WIDTH)}...` : prompt;
}

const parameters = z.object({
  // A free string, not an enum: the contract has its own message for each wrong value.
  agent_type: z.string().describe("The sub-agent to run: 'explore' (find and read code) or 'plan' (design an implementation)"),
  prompt: z.string().min(1).describe('The complete task for the sub-agent; it sees nothing else of this conversation'),
  working_dir: z.string().optional().describe('Directory the sub-agent works in, relative to the current working directory (default: the current working directory)'),
});

/** Runs an `explore` or `plan` sub-agent and returns its answer (docs/api.md, "Tools"). */
export const spawnAgentTool: Tool<typeof parameters> = {
  name: 'spawn_agent',
  description:
    "Delegate a self-contained question to a sub-agent and get its final answer: 'explore' searches and reads the codebase, 'plan' writes a step-by-step implementation plan. Both are read-only.",
  parameters,
  readOnly: true,
  startArgs: (params) => ({ agent_type: params.agent_type, prompt: startPrompt(params.prompt) }),
  async execute(params, context) {
    if (params.agent_type === 'task') return fail('Error: Cannot spawn nested Task agents (recursion risk)');
    if (!SPAWNABLE.includes(params.agent_type)) {
      return fail(`Error: Unknown agent type '${params.agent_type}'. Allowed: ['explore', 'plan']`);
    }
    if (!context.spawnAgent) return fail(`Error: Agent '${params.agent_type}' not found in registry`);
    try {
      const answer = await context.spawnAgent(params.agent_type, params.prompt, params.working_dir ?? context.workingDir, context.signal);
      return succeed(answer, { agent_type: params.agent_type });
    } catch (error) {
      if (context.signal.aborted) throw error;
      if (error instanceof UnknownAgentError) return fail(`Error: Agent '${params.agent_type}' not found in registry`);
      return fail(infrastructureFailure(`Sub-agent error: ${errorMessage(error)}`, error, context));
    }
  },
};
