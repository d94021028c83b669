import { randomUUID } from 'node:crypto';
import type { ModelToolCall } from './types.js';

/**
 * Local models often write a tool call into their text instead of sending a structured call
 * (DECISIONS.md). Recognised, each only for a name in the offered tool set:
 * - `<tool_call>{...}</tool_call>` tags (Qwen, Hermes); a last tag may lack its closing tag;
 * - a fenced block (```json, ```tool_call, ```tool_code or no language) holding only a call;
 * - a bare JSON object (or array of them) anywhere in the text.
 * A call is `{"name", "arguments"}`, with `parameters` or `args` accepted for `arguments`, the
 * arguments possibly a JSON string, optionally wrapped as `{"type": "function", "function": {...}}`.
 * Conservative: JSON that is not entirely calls to known tools, malformed JSON, code blocks in
 * other languages and everything inside them stay text.
 */

export type TextToolCall = Omit<ModelToolCall, 'argumentsError'>;

export interface TextToolCallExtraction {
  calls: TextToolCall[];
  /** The text without the recognised calls. Unchanged when there were none. */
  text: string;
}

export interface ExtractOptions {
  /** Ids for the recognised calls; they must be unique within a conversation. */
  newId?: () => string;
}

interface Region {
  start: number;
  end: number;
}

interface FoundCalls extends Region {
  calls: { name: string; arguments: Record<string, unknown> }[];
}

const ARGUMENT_KEYS = ['arguments', 'parameters', 'args'];
const CALL_FENCE_LANGUAGES = new Set(['', 'json', 'tool_call', 'tool_code']);

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

function argumentsOf(call: Record<string, unknown>): Record<string, unknown> | undefined {
  const present = ARGUMENT_KEYS.filter((key) => key in call);
  if (present.length !== 1) return undefined;
  const value = call[present[0] as string];
  if (typeof value !== 'string') return isPlainObject(value) ? value : undefined;
  const parsed = parseJson(value);
  return parsed.ok && isPlainObject(parsed.value) ? parsed.value : undefined;
}

function asCall(value: unknown, known: ReadonlySet<string>): FoundCalls['calls'][number] | undefined {
  if (!isPlainObject(value)) return undefined;
  const call = isPlainObject(value.function) ? value.function : value;
  const name = call.name;
  if (typeof name !== 'string' || !known.has(name)) return undefined;
  const args = argumentsOf(call);
  return args === undefined ? undefined : { name, arguments: args };
}

/** The calls a JSON text holds, if it is nothing but calls to known tools. */
function callsIn(json: string, known: ReadonlySet<string>): FoundCalls['calls'] | undefined {
  const parsed = parseJson(json.trim());
  if (!parsed.ok) return undefined;
  const items = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  const calls = items.map((item) => asCall(item, known));
  return calls.length > 0 && calls.every((c) => c !== undefined) ? calls : undefined;
}

/** Index just past the bracket closing the one at `start`, ignoring brackets inside strings; -1 if none. */
function closingIndex(text: string, start: number, limit: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < limit; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function regexRegions(text: string, pattern: RegExp, contentOf: (m: RegExpExecArray) => string | undefined, known: ReadonlySet<string>) {
  const all: Region[] = [];
  const found: FoundCalls[] = [];
  for (const match of text.matchAll(pattern)) {
    const region = { start: match.index, end: match.index + match[0].length };
    all.push(region);
    const content = contentOf(match);
    const calls = content === undefined ? undefined : callsIn(content, known);
    if (calls !== undefined) found.push({ ...region, calls });
  }
  return { all, found };
}

const overlaps = (a: Region, regions: readonly Region[]): boolean => regions.some((b) => a.start < b.end && b.start < a.end);

function bareJsonCalls(text: string, skip: readonly Region[], known: ReadonlySet<string>): FoundCalls[] {
  const found: FoundCalls[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '{' && !(c === '[' && /^\[\s*\{/.test(text.slice(i, i + 64)))) continue;
    const inside = skip.find((r) => i >= r.start && i < r.end);
    if (inside !== undefined) {
      i = inside.end - 1;
      continue;
    }
    const end = closingIndex(text, i, text.length);
    if (end < 0 || overlaps({ start: i, end }, skip)) continue;
    const candidate = text.slice(i, end);
    if (!parseJson(candidate).ok) continue;
    const calls = callsIn(candidate, known);
    if (calls !== undefined) found.push({ start: i, end, calls });
    // Valid JSON that is not a call is left whole: nothing inside it is looked at.
    i = end - 1;
  }
  return found;
}

function removeRegions(text: string, regions: readonly Region[]): string {
  let out = '';
  let at = 0;
  for (const region of regions) {
    out += text.slice(at, region.start);
    at = region.end;
  }
  out += text.slice(at);
  return out.replace(/[ \t]+\n/g, '\n').replace(/\n{3,}/g, '\n\n').trim();
}

const defaultId = (): string => `call_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

export function extractTextToolCalls(text: string, toolNames: Iterable<string>, options: ExtractOptions = {}): TextToolCallExtraction {
  const known = new Set(toolNames);
  // Every recognised form names a known tool inside quotes; most answers are ruled out here.
  if (![...known].some((name) => text.includes(`"${name}"`))) return { calls: [], text };
  const tags = regexRegions(text, /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g, (m) => m[1], known);
  const fences = regexRegions(
    text,
    /```([\w-]*)[ \t]*\r?\n([\s\S]*?)```/g,
    (m) => (CALL_FENCE_LANGUAGES.has((m[1] ?? '').toLowerCase()) ? m[2] : undefined),
    known,
  );
  const fenceFound = fences.found.filter((r) => !overlaps(r, tags.all));
  const found = [...tags.found, ...fenceFound, ...bareJsonCalls(text, [...tags.all, ...fences.all], known)].sort((a, b) => a.start - b.start);
  if (found.length === 0) return { calls: [], text };
  const newId = options.newId ?? defaultId;
  const calls = found.flatMap((region) => region.calls.map((call) => ({ id: newId(), ...call, rawArguments: JSON.stringify(call.arguments) })));
  return { calls, text: removeRegions(text, found) };
}
