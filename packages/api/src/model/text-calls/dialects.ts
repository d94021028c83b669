import { argumentsValue, callsInJson, type ParsedCall } from './call-shapes.js';
import { closingIndex, parseLenientJson } from './lenient-json.js';

/**
 * Where each runtime's chat template puts a tool call when the runtime does not parse it out.
 * A finder returns every region its markers claim: with `calls` when the region holds nothing
 * but calls to offered tools, without when it holds something else (it then stays text, and no
 * other form is looked for inside it).
 */
export interface Region {
  start: number;
  end: number;
  calls?: ParsedCall[];
}

export type Finder = (text: string, known: ReadonlySet<string>) => Region[];

const region = (start: number, end: number, calls: ParsedCall[] | undefined): Region => (calls === undefined ? { start, end } : { start, end, calls });

/** JSON values one after another, separated by whitespace, `;` or `,` (Llama's python_tag, several Hermes calls). */
export function callsInSequence(body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const calls: ParsedCall[] = [];
  let at = 0;
  for (;;) {
    while (at < body.length && /[\s;,]/.test(body[at]!)) at++;
    if (at >= body.length) return calls.length > 0 ? calls : undefined;
    if (body[at] !== '{' && body[at] !== '[') return undefined;
    const close = closingIndex(body, at);
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
  for (const match of trimmed.matchAll(/<parameter=([^>\s]+)>([\s\S]*?)(?:<\/parameter>|$)/g)) args[match[1]!] = parameterValue(match[2]!);
  return args;
}

function functionCall(name: string, body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  if (!known.has(name)) return undefined;
  const args = functionArguments(body);
  return args === undefined ? undefined : [{ name, arguments: args }];
}

const FUNCTION_TAG = /<function=([\w.-]+)>([\s\S]*?)(?:<\/function>|$)/g;

/** Llama 3.x: `<function=NAME>{...}</function>`; Qwen3-Coder puts `<parameter=...>` pairs inside. */
export const functionTags: Finder = (text, known) =>
  [...text.matchAll(FUNCTION_TAG)].map((m) => region(m.index, m.index + m[0].length, functionCall(m[1]!, m[2]!, known)));

function toolCallBody(body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const trimmed = body.trim();
  if (!trimmed.startsWith('<function=')) return callsInSequence(trimmed, known);
  const inner = functionTags(trimmed, known);
  return inner.length > 0 && inner.every((r) => r.calls) ? inner.flatMap((r) => r.calls!) : undefined;
}

/** Qwen and Hermes: `<tool_call>{...}</tool_call>`; a last tag may lack its closing tag. */
export const toolCallTags: Finder = (text, known) =>
  [...text.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g)].map((m) => region(m.index, m.index + m[0].length, toolCallBody(m[1]!, known)));

/** Llama 3.1: `<|python_tag|>{"name", "parameters"}` up to the end of the message. */
export const pythonTag: Finder = (text, known) =>
  [...text.matchAll(/<\|python_tag\|>([\s\S]*?)(?:<\|eom_id\|>|<\|eot_id\|>|$)/g)].map((m) =>
    region(m.index, m.index + m[0].length, callsInSequence(m[1]!, known)),
  );

/** Mistral v11+: `NAME[ARGS]{...}`, optionally with `[CALL_ID]id` between. */
function mistralNamed(text: string, at: number, known: ReadonlySet<string>): { end: number; calls: ParsedCall[] | undefined } {
  const head = /^([\w.-]+)(?:\[CALL_ID\][\w-]*)?\[ARGS\]/.exec(text.slice(at, at + 256));
  if (head === null) return { end: at, calls: undefined };
  const start = at + head[0].length;
  const close = text[start] === '{' ? closingIndex(text, start) : -1;
  const end = close < 0 ? text.length : close;
  const args = argumentsValue(parseLenientJson(text.slice(start, end)));
  const name = head[1]!;
  return { end, calls: args !== undefined && known.has(name) ? [{ name, arguments: args }] : undefined };
}

/** Mistral: `[TOOL_CALLS][{...}, ...]`, or `[TOOL_CALLS]NAME[ARGS]{...}`. */
export const mistralCalls: Finder = (text, known) => {
  const regions: Region[] = [];
  const MARKER = '[TOOL_CALLS]';
  for (let at = text.indexOf(MARKER); at >= 0; at = text.indexOf(MARKER, at + 1)) {
    let body = at + MARKER.length;
    while (body < text.length && /\s/.test(text[body]!)) body++;
    if (text[body] === '[' || text[body] === '{') {
      const close = closingIndex(text, body);
      const end = close < 0 ? text.length : close;
      regions.push(region(at, end, callsInJson(text.slice(body, end), known)));
    } else {
      const named = mistralNamed(text, body, known);
      regions.push(region(at, Math.max(named.end, body), named.calls));
    }
  }
  return regions;
};

// DeepSeek's markers use full-width bars and U+2581 for spaces; models also write them in ASCII.
const DS = (words: string): string => `<[|\uFF5C]${words.split(' ').join('[\u2581_ ]')}[|\uFF5C]>`;
const DS_CALLS = new RegExp(`${DS('tool calls begin')}([\\s\\S]*?)(?:${DS('tool calls end')}|$)`, 'g');
const DS_CALL = new RegExp(`${DS('tool call begin')}([\\s\\S]*?)(?:${DS('tool call end')}|$)`, 'g');
const DS_SEP = new RegExp(DS('tool sep'));

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
  const json = right.trim().replace(/^```[\w-]*\s*/, '').replace(/\s*```$/, '');
  const args = json === '' ? {} : argumentsValue(parseLenientJson(json));
  return args !== undefined && known.has(name) ? { name, arguments: args } : undefined;
}

function deepseekBlock(body: string, known: ReadonlySet<string>): ParsedCall[] | undefined {
  const calls = [...body.matchAll(DS_CALL)].map((m) => deepseekCall(m[1]!, known));
  return calls.length > 0 && calls.every((c) => c !== undefined) ? calls : undefined;
}

/** DeepSeek: `<｜tool▁calls▁begin｜>` around one `<｜tool▁call▁begin｜>...<｜tool▁call▁end｜>` per call. */
export const deepseekCalls: Finder = (text, known) => {
  const outer = [...text.matchAll(DS_CALLS)].map((m) => region(m.index, m.index + m[0].length, deepseekBlock(m[1]!, known)));
  if (outer.length > 0) return outer;
  return [...text.matchAll(DS_CALL)].map((m) => {
    const call = deepseekCall(m[1]!, known);
    return region(m.index, m.index + m[0].length, call === undefined ? undefined : [call]);
  });
};

const HARMONY_STARTS = ['<|start|>', '<|channel|>'];
const NEAR = 96;

/** gpt-oss (harmony): `<|channel|>commentary to=functions.NAME <|constrain|>json<|message|>{...}<|call|>`. */
export const harmonyCalls: Finder = (text, known) => {
  const regions: Region[] = [];
  for (const m of text.matchAll(/to=functions\.([\w.-]+)/g)) {
    const before = text.slice(Math.max(0, m.index - NEAR), m.index);
    const opener = Math.max(...HARMONY_STARTS.map((s) => before.lastIndexOf(s)));
    const start = opener < 0 ? m.index : m.index - before.length + opener;
    const after = m.index + m[0].length;
    const message = text.indexOf('<|message|>', after);
    const from = message >= 0 && message - after < NEAR ? message + '<|message|>'.length : after;
    const brace = text.indexOf('{', from);
    if (brace < 0 || brace - from > NEAR) {
      regions.push(region(start, after, undefined));
      continue;
    }
    const close = closingIndex(text, brace);
    let end = close < 0 ? text.length : close;
    const args = argumentsValue(parseLenientJson(text.slice(brace, end)));
    if (text.startsWith('<|call|>', end)) end += '<|call|>'.length;
    const name = m[1]!;
    regions.push(region(start, end, args !== undefined && known.has(name) ? [{ name, arguments: args }] : undefined));
  }
  return regions;
};

const CALL_FENCE_LANGUAGES = new Set(['', 'json', 'tool_call', 'tool_code', 'tool']);

/** A fenced block (```json, ```tool_call, or no language) holding nothing but calls. */
export const fencedBlocks: Finder = (text, known) =>
  [...text.matchAll(/```([\w-]*)[ \t]*\r?\n([\s\S]*?)```/g)].map((m) =>
    region(m.index, m.index + m[0].length, CALL_FENCE_LANGUAGES.has(m[1]!.toLowerCase()) ? callsInSequence(m[2]!.trim(), known) : undefined),
  );
