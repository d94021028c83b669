import { z } from 'zod';
import type { JsonSchema, ToolDefinition } from './types.js';

/**
 * The definition the model sees for a tool whose arguments are a zod schema. The input side of
 * the schema is used, so arguments with defaults are optional to the model. A tool that brings
 * its own JSON Schema (an MCP server's) is described by that.
 */
export function describeTool(tool: { name: string; description: string; parameters: z.ZodType; inputSchema?: JsonSchema }): ToolDefinition {
  return { name: tool.name, description: tool.description, parameters: tool.inputSchema ?? inputSchemaOf(tool.parameters) };
}

/**
 * Tools are built once and offered in every run: converting a schema each time cost every run's
 * start a few milliseconds. Kept per schema object; callers treat the result as read-only.
 */
const inputSchemas = new WeakMap<z.ZodType, JsonSchema>();

function inputSchemaOf(schema: z.ZodType): JsonSchema {
  let json = inputSchemas.get(schema);
  if (json === undefined) {
    json = z.toJSONSchema(schema, { io: 'input' }) as JsonSchema;
    inputSchemas.set(schema, json);
  }
  return json;
}
