import { Brackets } from './brackets.js';
import { argumentsValue, callsInJson, type ParsedCall } from './call-shapes.js';
import { Claims, type Region } from './claims.js';
import { parseLenientJson } from './lenient-json.js';

export type { Region } from './claims.js';

/** One answer being searched for calls, shared by the finders. */
export interface Scan {
  text: string;
  known: ReadonlySet<string>;
  /** Regions kept so far: a finder parses a region only when it is free. */
  claims: Claims;
  brackets: Brackets;
}

export const newScan = (text: string, known: ReadonlySet<string>): Scan => ({ text, known, claims: new Claims(), brackets: new Brackets(text) });

/**
 * Where each runtime's chat template puts a tool call when the runtime does not parse it out.
 * A finder yields, in order, every free region its markers claim: with `calls` when the region
 * holds nothing but calls to offered tools, without when it holds something else (it then stays
 * text, and no other form is looked for inside it). Each region yielded is kept before the finder
 * goes on, so a later candidate overlapping it is passed over unparsed.
 */
export type Finder = (scan: Scan) => Iterable<Region>;

/** The free regions of a regular expression's matches, each parsed by `parse` from its match. */
function* matchedRegions(scan: Scan, pattern: RegExp, parse: (match: RegExpExecArray) => ParsedCall[] | undefined): Iterable<Region> {
  for (const m of scan.text.matchAll(pattern)) {
    const end = m.index + m[0].length;
    if (scan.claims.isFree(m.index, end)) yield region(m.index, end, parse(m));
  }
}

const region = (start: number, end: number, calls: ParsedCall[] | undefined): Region => (calls === undefined ? { start, end } : { start, end, calls });

/** JSON values one after another, separated by whitespace, `;` or `,` (Llama's python_tag, several Hermes calls). */
export function callsInSequence(body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  const brackets = new Brackets(body);
  let at = 0;
  for (;;) {
    while (at < body.length && /[\s;,]/.test(body[at]!)) at++;
    if (at >= body.length) return calls.length > 0 ? calls : undefined;
    if (body[at] !== '{' && body[at] !== '[') return undefined;
    const close = brackets.close(at);
    const end = close < 0 ? body.length : close;
    const found = callsInJson(body.slice(at, end), known);
    if (found === undefined) return undefined;
    calls.push(...found);
    at = end;
  }
}

/** A parameter value of Qwen3-Coder's XML form: JSON when it reads as a non-string value, else the text. */
function parameterValue(raw: string): unknown {
  const text = raw.replace(/^\r?\n/, '').replace(/\r?\n$/, '');
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'string' ? text : value;
  } catch {
    return text;
  }
}

/** `{json}`, nothing, or `<parameter=K>V</parameter>` pairs: the body of `<function=NAME>`. */
function functionArguments(body: string): Record<string, unknown> | undefined {
  const trimmed = body.trim();
  if (trimmed === '') return {};
  if (!trimmed.startsWith('<parameter=')) return argumentsValue(parseLenientJson(trimmed));
  const args: Record<string, unknown> = {};
  // A name never holds `<`: each candidate name then ends before the next tag.
  for (const match of trimmed.matchAll(/<parameter=([^<>\s]+)>([\s\S]*?)(?:<\/parameter>|$)/g)) args[match[1]!] = parameterValue(match[2]!);
  return args;
}

function functionCall(name: string, body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  if (!known.has(name)) return undefined;
  const args = functionArguments(body);
  return args === undefined ? undefined : [{ name, arguments: args }];
}

const FUNCTION_TAG = /<function=([\w.-]+)>([\s\S]*?)(?:<\/function>|$)/g;

/** Llama 3.x: `<function=NAME>{...}</function>`; Qwen3-Coder puts `<parameter=...>` pairs inside. */
export const functionTags: Finder = (scan) => matchedRegions(scan, FUNCTION_TAG, (m) => functionCall(m[1]!, m[2]!, scan.known));

function toolCallBody(body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const trimmed = body.trim();
  if (!trimmed.startsWith('<function=')) return callsInSequence(trimmed, known);
  const inner = [...functionTags(newScan(trimmed, known))];
  return inner.length > 0 && inner.every((r) => r.calls) ? inner.flatMap((r) => r.calls!) : undefined;
}

/** Qwen and Hermes: `<tool_call>{...}</tool_call>`; a last tag may lack its closing tag. */
export const toolCallTags: Finder = (scan) => matchedRegions(scan, /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g, (m) => toolCallBody(m[1]!, scan.known));

/** Llama 3.1: `<|python_tag|>{"name", "parameters"}` up to the end of the message. */
export const pythonTag: Finder = (scan) =>
  matchedRegions(scan, /<\|python_tag\|>([\s\S]*?)(?:<\|eom_id\|>|<\|eot_id\|>|$)/g, (m) => callsInSequence(m[1]!, scan.known));

/** Mistral v11+: `NAME[ARGS]{...}`, optionally with `[CALL_ID]id` between; `at` is past the marker. */
function mistralNamed(scan: Scan, marker: number, at: number): Region | undefined {
  const { text, known } = scan;
  const head = /^([\w.-]+)(?:\[CALL_ID\][\w-]*)?\[ARGS\]/.exec(text.slice(at, at + 256));
  if (head === null) return scan.claims.isFree(marker, at) ? region(marker, at, undefined) : undefined;
  const start = at + head[0].length;
  const close = text[start] === '{' ? scan.brackets.close(start) : -1;
  const end = close < 0 ? text.length : close;
  if (!scan.claims.isFree(marker, end)) return undefined;
  const args = argumentsValue(parseLenientJson(text.slice(start, end)));
  const name = head[1]!;
  return region(marker, end, args !== undefined && known.has(name) ? [{ name, arguments: args }] : undefined);
}

/** Mistral: `[TOOL_CALLS][{...}, ...]`, or `[TOOL_CALLS]NAME[ARGS]{...}`. */
export const mistralCalls: Finder = function* (scan) {
  const { text, known } = scan;
  const MARKER = '[TOOL_CALLS]';
  for (let at = text.indexOf(MARKER); at >= 0; at = text.indexOf(MARKER, at + 1)) {
    let body = at + MARKER.length;
    while (body < text.length && /\s/.test(text[body]!)) body++;
    if (text[body] === '[' || text[body] === '{') {
      const close = scan.brackets.close(body);
      const end = close < 0 ? text.length : close;
      if (scan.claims.isFree(at, end)) yield region(at, end, callsInJson(text.slice(body, end), known));
    } else {
      const named = mistralNamed(scan, at, body);
      if (named !== undefined) yield named;
    }
  }
};

// DeepSeek's markers use full-width bars and U+2581 for spaces; models also write them in ASCII.
const DS = (words: string): string => `<[|\uFF5C]${words.split(' ').join('[\u2581_ ]')}[|\uFF5C]>`;
const DS_CALLS = new RegExp(`${DS('tool calls begin')}([\\s\\S]*?)(?:${DS('tool calls end')}|$)`, 'g');
const DS_CALL = new RegExp(`${DS('tool call begin')}([\\s\\S]*?)(?:${DS('tool call end')}|$)`, 'g');
const DS_SEP = new RegExp(DS('tool sep'));
const DS_CALLS_START = new RegExp(DS('tool calls begin'));

/** One DeepSeek call: `function<sep>NAME\n```json\n{...}\n```` (V3, R1) or `NAME<sep>{...}` (V3.1). */
function deepseekCall(body: string, known: ReadonlySet<string>): ParsedCall | undefined {
  const sep = DS_SEP.exec(body);
  if (sep === null) return undefined;
  const left = body.slice(0, sep.index).trim();
  let right = body.slice(sep.index + sep[0].length);
  let name = left;
  if (left === 'function') {
    const newline = right.indexOf('\n');
    name = (newline < 0 ? right : right.slice(0, newline)).trim();
    right = newline < 0 ? '' : right.slice(newline + 1);
  }
  const json = withoutFence(right.trim());
  const args = json === '' ? {} : argumentsValue(parseLenientJson(json));
  return args !== undefined && known.has(name) ? { name, arguments: args } : undefined;
}

/** The text inside a fence around it, if any. Not a regular expression ending in `$`: that one retries from every space of a long run. */
function withoutFence(text: string): string {
  const opened = text.replace(/^```[\w-]*\s*/, '');
  return opened.endsWith('```') ? opened.slice(0, -3).trimEnd() : opened;
}

function deepseekBlock(body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const calls = [...body.matchAll(DS_CALL)].map((m) => deepseekCall(m[1]!, known));
  return calls.length > 0 && calls.every((c) => c !== undefined) ? calls : undefined;
}

/** DeepSeek: `<｜tool▁calls▁begin｜>` around one `<｜tool▁call▁begin｜>...<｜tool▁call▁end｜>` per call. */
export const deepseekCalls: Finder = function* (scan) {
  // Single calls count only in an answer without the outer markers.
  if (scan.text.search(DS_CALLS_START) >= 0) {
    yield* matchedRegions(scan, DS_CALLS, (m) => deepseekBlock(m[1]!, scan.known));
    return;
  }
  yield* matchedRegions(scan, DS_CALL, (m) => {
    const call = deepseekCall(m[1]!, scan.known);
    return call === undefined ? undefined : [call];
  });
};

const HARMONY_STARTS = ['<|start|>', '<|channel|>'];
const NEAR = 96;

/** Where `marker` begins within `NEAR` characters from `from`; -1 if not there. */
function nearIndex(text: string, marker: string, from: number): number {
  const at = text.slice(from, from + NEAR + marker.length).indexOf(marker);
  return at < 0 ? -1 : from + at;
}

/** gpt-oss (harmony): `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>`. */
export const harmonyCalls: Finder = function* (scan) {
  const { text, known } = scan;
  for (const m of text.matchAll(/to=functions\.([\w.-]+)/g)) {
    const before = text.slice(Math.max(0, m.index - NEAR), m.index);
    const opener = Math.max(...HARMONY_STARTS.map((s) => before.lastIndexOf(s)));
    const start = opener < 0 ? m.index : m.index - before.length + opener;
    const after = m.index + m[0].length;
    // Searched for near the name only: a search to the end of the answer for each name costs
    // time quadratic in an answer of many names.
    const message = nearIndex(text, '<|message|>', after);
    const from = message >= 0 && message - after < NEAR ? message + '<|message|>'.length : after;
    const brace = nearIndex(text, '{', from);
    if (brace < 0 || brace - from > NEAR) {
      if (scan.claims.isFree(start, after)) yield region(start, after, undefined);
      continue;
    }
    const close = scan.brackets.close(brace);
    const json = close < 0 ? text.length : close;
    const end = text.startsWith('<|call|>', json) ? json + '<|call|>'.length : json;
    if (!scan.claims.isFree(start, end)) continue;
    const args = argumentsValue(parseLenientJson(text.slice(brace, json)));
    const name = m[1]!;
    yield region(start, end, args !== undefined && known.has(name) ? [{ name, arguments: args }] : undefined);
  }
};

const CALL_FENCE_LANGUAGES = new Set(['', 'json', 'tool_call', 'tool_code', 'tool']);

/** A fenced block (```json, ```tool_call, or no language) holding nothing but calls. */
export const fencedBlocks: Finder = (scan) =>
  matchedRegions(scan, /```([\w-]*)[ \t]*\r?\n([\s\S]*?)```/g, (m) =>
    CALL_FENCE_LANGUAGES.has(m[1]!.toLowerCase()) ? callsInSequence(m[2]!.trim(), scan.known) : undefined,
  );
