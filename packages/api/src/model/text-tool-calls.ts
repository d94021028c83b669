import { randomUUID } from 'node:crypto';
import type { ModelToolCall } from './types.js';
import { callsInJson } from './text-calls/call-shapes.js';
import { deepseekCalls, fencedBlocks, functionTags, harmonyCalls, mistralCalls, pythonTag, toolCallTags, type Finder, type Region } from './text-calls/dialects.js';
import { closingIndex } from './text-calls/lenient-json.js';
import { stripThinking } from './text-calls/thinking.js';

/**
 * Local models often write a tool call into their text instead of sending a structured call,
 * each in its chat template's own dialect: `<tool_call>` (Qwen,
 * Hermes), `<function=NAME>` (Llama 3.x, Qwen3-Coder), `<|python_tag|>` (Llama 3.1),
 * `[TOOL_CALLS]` (Mistral), DeepSeek's markers, gpt-oss's `to=functions.NAME`, fenced blocks and
 * bare JSON objects. Broken JSON is repaired (jsonrepair). Conservative: only calls to offered
 * tools count, a region holding anything else stays text, and reasoning (`<think>`) is dropped
 * before anything is looked for.
 */

export type TextToolCall = Omit<ModelToolCall, 'argumentsError'>;

export interface TextToolCallExtraction {
  calls: TextToolCall[];
  /** The text without reasoning and without the recognised calls. */
  text: string;
}

export interface ExtractOptions {
  /** Ids for the recognised calls; they must be unique within a conversation. */
  newId?: () => string;
}

/** In order of precedence: a region claimed by an earlier finder is not searched by later ones. */
const FINDERS: readonly Finder[] = [toolCallTags, functionTags, pythonTag, mistralCalls, deepseekCalls, harmonyCalls, fencedBlocks];

const overlaps = (a: Region, regions: readonly Region[]): boolean => regions.some((b) => a.start < b.end && b.start < a.end);

/** The longest JSON object a model writes as a bare call; longer candidates are not parsed. */
const MAX_BARE_JSON = 1 << 20;

function bareJsonCalls(text: string, skip: readonly Region[], known: ReadonlySet<string>): Region[] {
  const found: Region[] = [];
  const sorted = [...skip].sort((a, b) => a.start - b.start);
  let next = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '{' && c !== '[') continue;
    while (next < sorted.length && sorted[next]!.end <= i) next++;
    const inside = sorted[next];
    if (inside !== undefined && i >= inside.start) {
      i = inside.end - 1;
      continue;
    }
    if (c === '[' && !/^\[\s*\{/.test(text.slice(i, i + 64))) continue;
    const end = closingIndex(text, i, Math.min(text.length, i + MAX_BARE_JSON));
    if (end < 0 || overlaps({ start: i, end }, skip)) continue;
    const calls = callsInJson(text.slice(i, end), known);
    if (calls !== undefined) found.push({ start: i, end, calls });
    // A balanced value that is not a call is left whole: nothing inside it is looked at.
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

/** Every region the dialect finders claim, earlier finders first. */
function claimedRegions(text: string, known: ReadonlySet<string>): Region[] {
  const claimed: Region[] = [];
  for (const finder of FINDERS) {
    for (const found of finder(text, known)) if (!overlaps(found, claimed)) claimed.push(found);
  }
  return claimed;
}

export function extractTextToolCalls(raw: string, toolNames: Iterable<string>, options: ExtractOptions = {}): TextToolCallExtraction {
  const known = new Set(toolNames);
  const text = stripThinking(raw);
  // Every recognised form names an offered tool; most answers are ruled out here.
  if (![...known].some((name) => text.includes(name))) return { calls: [], text };
  const claimed = claimedRegions(text, known);
  const found = [...claimed.filter((r) => r.calls !== undefined), ...bareJsonCalls(text, claimed, known)].sort((a, b) => a.start - b.start);
  if (found.length === 0) return { calls: [], text };
  const newId = options.newId ?? defaultId;
  const calls = found.flatMap((r) => (r.calls ?? []).map((call) => ({ id: newId(), ...call, rawArguments: JSON.stringify(call.arguments) })));
  return { calls, text: removeRegions(text, found) };
}
