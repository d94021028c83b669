import { z } from 'zod';
import type { JsonSchema, ToolDefinition } from './types.js';

/**
 * The definition the model sees for a tool whose arguments are a zod schema. The input side of
 * the schema is used, so arguments with defaults are optional to the model.
 */
export function describeTool(tool: { name: string; description: string; parameters: z.ZodType }): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: z.toJSONSchema(tool.parameters, { io: 'input' }) as JsonSchema };
}
