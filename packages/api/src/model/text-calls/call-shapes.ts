import { parseLenientJson } from './lenient-json.js';

export interface ParsedCall {
  name: string;
  arguments: Record<string, unknown>;
}

const ARGUMENT_KEYS = ['arguments', 'parameters', 'args'];

export const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Arguments given as an object, or as a JSON text of one (OpenAI's habit, copied by some models). */
export function argumentsValue(value: unknown): Record<string, unknown> | undefined {
  if (isPlainObject(value)) return value;
  if (typeof value !== 'string') return undefined;
  if (value.trim() === '') return {};
  const parsed = value.trimStart().startsWith('{') ? parseLenientJson(value) : undefined;
  return isPlainObject(parsed) ? parsed : undefined;
}

function argumentsOf(call: Record<string, unknown>): Record<string, unknown> | undefined {
  const present = ARGUMENT_KEYS.filter((key) => key in call);
  if (present.length !== 1) return undefined;
  return argumentsValue(call[present[0]!]);
}

/**
 * `{"name", "arguments"}` (or `parameters`/`args`), optionally wrapped as
 * `{"type": "function", "function": {...}}`, naming an offered tool.
 */
export function asCall(value: unknown, known: ReadonlySet<string>): ParsedCall | undefined {
  if (!isPlainObject(value)) return undefined;
  const call = isPlainObject(value.function) ? value.function : value;
  const name = call.name;
  if (typeof name !== 'string' || !known.has(name)) return undefined;
  const args = argumentsOf(call);
  return args === undefined ? undefined : { name, arguments: args };
}

/** The calls a JSON value holds, if it is nothing but calls to known tools (an object or an array). */
export function callsInValue(value: unknown, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const items = Array.isArray(value) ? value : [value];
  const calls = items.map((item) => asCall(item, known));
  return calls.length > 0 && calls.every((c) => c !== undefined) ? calls : undefined;
}

/** The calls a JSON text holds (repaired if need be), if it is nothing but calls to known tools. */
export function callsInJson(json: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const trimmed = json.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  return callsInValue(parseLenientJson(trimmed), known);
}
