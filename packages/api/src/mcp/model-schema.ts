/** Nesting a model's tool schema may have; real schemas stay far below it. */
export const MAX_SCHEMA_DEPTH = 32;
/** The size of one tool's schema as the model reads it: definitions count against a small model's window. */
export const MAX_SCHEMA_CHARS = 32_000;

export type ModelSchema = { schema: Record<string, unknown> } | { problem: string };

/**
 * A server's `inputSchema` as the model is given it (with native tool calls and in the text
 * protocol's prompt alike): an object schema without the draft marker, with `properties` present.
 * A schema nested deeper than MAX_SCHEMA_DEPTH or larger than MAX_SCHEMA_CHARS is refused (the
 * tool is left out): the walk stops at that depth, so a schema nested 1,000 deep costs no more
 * than one nested 33 deep.
 */
export function modelSchema(input: Record<string, unknown>): ModelSchema {
  if (input.type !== 'object') return { problem: 'its input schema is not an object schema' };
  if (exceedsDepth(input, MAX_SCHEMA_DEPTH)) return { problem: `its input schema is nested more than ${MAX_SCHEMA_DEPTH} levels deep` };
  const { $schema: _draft, ...rest } = input;
  const schema = { ...rest, properties: rest.properties ?? {} };
  const size = JSON.stringify(schema).length;
  if (size > MAX_SCHEMA_CHARS) return { problem: `its input schema takes ${size} characters (at most ${MAX_SCHEMA_CHARS})` };
  return { schema };
}

/** Whether objects and arrays nest deeper than `limit` under `value`; iterative, stops at the limit. */
function exceedsDepth(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(current)) if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}
