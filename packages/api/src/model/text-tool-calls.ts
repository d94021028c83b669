import { randomUUID } from 'node:crypto';
import type { ModelToolCall } from './types.js';
import { callsInJson } from './text-calls/call-shapes.js';
import {
  deepseekCalls,
  fencedBlocks,
  functionTags,
  harmonyCalls,
  mistralCalls,
  newScan,
  pythonTag,
  toolCallTags,
  type Finder,
  type Region,
} from './text-calls/dialects.js';
import { ANSWER_REPAIR_CHARS, withRepairBudget } from './text-calls/lenient-json.js';
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

/** The longest JSON object a model writes as a bare call; longer candidates are not parsed. */
const MAX_BARE_JSON = 1 << 20;

/**
 * A JSON value standing in the text (outside every region claimed), holding nothing but calls.
 * A balanced value that is not a call is passed over whole: nothing inside it is looked at.
 */
const bareJson: Finder = function* ({ text, known, claims, brackets }) {
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c !== '{' && c !== '[') continue;
    const inside = claims.holding(i);
    if (inside !== undefined) {
      i = inside.end - 1;
      continue;
    }
    if (c === '[' && !/^\[\s*\{/.test(text.slice(i, i + 64))) continue;
    const end = brackets.close(i);
    if (end < 0 || end - i > MAX_BARE_JSON || !claims.isFree(i, end)) continue;
    const calls = callsInJson(text.slice(i, end), known);
    if (calls !== undefined) yield { start: i, end, calls };
    i = end - 1;
  }
};

/** In order of precedence: a region claimed by an earlier finder is not searched by later ones. */
const FINDERS: readonly Finder[] = [toolCallTags, functionTags, pythonTag, mistralCalls, deepseekCalls, harmonyCalls, fencedBlocks, bareJson];

function removeRegions(text: string, regions: readonly Region[]): string {
  let out = '';
  let at = 0;
  for (const region of regions) {
    out += text.slice(at, region.start);
    at = region.end;
  }
  out += text.slice(at);
  return out.split('\n').map(withoutTrailingBlanks).join('\n').replace(/\n{3,}/g, '\n\n').trim();
}

/**
 * The line without the spaces and tabs ending it. Not `/[ \t]+\n/g`: on a long run of spaces
 * that no newline ends, that expression retries from every space of the run (256 KB, 25 s).
 */
function withoutTrailingBlanks(line: string): string {
  let end = line.length;
  while (end > 0 && (line[end - 1] === ' ' || line[end - 1] === '\t')) end--;
  return end === line.length ? line : line.slice(0, end);
}

const defaultId = (): string => `call_${randomUUID().replaceAll('-', '').slice(0, 16)}`;

/** Every region the finders claim, earlier finders first, in the order of the text. */
function claimedRegions(text: string, known: ReadonlySet<string>): Region[] {
  const scan = newScan(text, known);
  for (const finder of FINDERS) {
    for (const found of finder(scan)) scan.claims.add(found);
    scan.claims.settle();
  }
  return scan.claims.regions();
}

export function extractTextToolCalls(raw: string, toolNames: Iterable<string>, options: ExtractOptions = {}): TextToolCallExtraction {
  const known = new Set(toolNames);
  const text = stripThinking(raw);
  // Every recognised form names an offered tool; most answers are ruled out here.
  if (![...known].some((name) => text.includes(name))) return { calls: [], text };
  const found = withRepairBudget(ANSWER_REPAIR_CHARS, () => claimedRegions(text, known)).filter((r) => r.calls !== undefined);
  if (found.length === 0) return { calls: [], text };
  const newId = options.newId ?? defaultId;
  const calls = found.flatMap((r) => (r.calls ?? []).map((call) => ({ id: newId(), ...call, rawArguments: JSON.stringify(call.arguments) })));
  return { calls, text: removeRegions(text, found) };
}
