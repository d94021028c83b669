import type { ModelToolCall } from './types.js';

/**
 * Deepest nesting of objects and arrays a call's arguments may have. No tool takes more than a
 * level or two; a model steered by a repository can send thousands (JSON.parse takes them), and
 * every recursive walk afterwards (the event encoder, JSON.stringify for the context window)
 * overflowed the stack: the encoder's RangeError ended the whole service.
 */
export const MAX_ARGUMENT_DEPTH = 64;

/** Whether `value` nests objects or arrays more than `max` levels deep; walked without recursion. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (next.value === null || typeof next.value !== 'object') continue;
    if (next.depth >= max) return true;
    for (const item of Object.values(next.value)) pending.push({ value: item, depth: next.depth + 1 });
  }
  return false;
}

/** The call as given, or with its arguments dropped and an error the model reads when they nest too deeply. */
export function withBoundedArguments(call: ModelToolCall): ModelToolCall {
  if (!nestedDeeperThan(call.arguments, MAX_ARGUMENT_DEPTH)) return call;
  return { ...call, arguments: {}, argumentsError: `The arguments nest objects or arrays more than ${MAX_ARGUMENT_DEPTH} levels deep` };
}
