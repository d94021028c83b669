import { z } from 'zod';
import { PERMISSION_MODES } from './permission-modes.js';

export const AGENT_TYPES = ['explore', 'plan', 'task'] as const;
export const AgentType = z.enum(AGENT_TYPES);
export type AgentType = z.infer<typeof AgentType>;

export { PERMISSION_MODES };
export const PermissionMode = z.enum(PERMISSION_MODES).meta({ id: 'PermissionMode' });
export type PermissionMode = z.infer<typeof PermissionMode>;

/**
 * A model of the service's LLM_MODELS (`GET /models`); absent: its default. A string, not an
 * enum the schema knows: an unknown model is a 400 `Unknown model: <name>`.
 */
export const ModelName = z.string().min(1).max(255).meta({ id: 'ModelName', description: 'A model of GET /models; absent: the default one.' });

/**
 * An agent's name in a request. Validated as a string, not the enum: an unknown agent is a 400
 * with a named detail, not a 422. The document still lists the built-in agents, so the docs
 * page offers a value that works.
 */
export const AgentTypeName = z.string().min(1).max(50).meta({ enum: [...AGENT_TYPES], examples: ['explore'] });

/** A prompt that works when the docs page's "Try it out" sends it as it stands. */
export const Prompt = z.string().min(1).meta({ examples: ['List the files in this directory and say what each one is for.'] });

export const AgentRunRequest = z
  .object({
    agent_type: AgentTypeName,
    prompt: Prompt,
    working_dir: z.string().max(1024).default('.'),
    mode: PermissionMode.default('default'),
    model: ModelName.optional(),
  })
  .meta({ id: 'AgentRunRequest' });
export type AgentRunRequest = z.infer<typeof AgentRunRequest>;

export const AgentRunResponse = z
  .object({
    response: z.string(),
    agent_type: z.string(),
    mode: PermissionMode,
    success: z.boolean(),
    error: z.string().optional(),
  })
  .meta({ id: 'AgentRunResponse' });
export type AgentRunResponse = z.infer<typeof AgentRunResponse>;

export const AgentInfo = z
  .object({ name: z.string(), description: z.string().min(1) })
  .meta({ id: 'AgentInfo' });
export type AgentInfo = z.infer<typeof AgentInfo>;

export const AgentListResponse = z.object({ agents: z.array(AgentInfo) }).meta({ id: 'AgentListResponse' });
export type AgentListResponse = z.infer<typeof AgentListResponse>;

export const AgentTypeParams = z.object({ agent_type: z.string() });
