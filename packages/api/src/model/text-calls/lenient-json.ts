import { jsonrepair } from 'jsonrepair';

/**
 * The longest text handed to jsonrepair. Its work grows with the text times the repairs it makes
 * (each inserted comma or closing bracket copies what it has written so far): 200 KB of
 * `[1 1 1 ...]` took it seven seconds on the event loop. Longer texts get only the linear repair
 * of raw line breaks and tabs in strings, the breakage long arguments (a file's content) show.
 */
export const MAX_REPAIR_CHARS = 32 * 1024;

/** What jsonrepair may be handed in all during one search of an answer (see `withRepairBudget`). */
export const ANSWER_REPAIR_CHARS = 16 * MAX_REPAIR_CHARS;

/**
 * Characters jsonrepair may still be handed in the current search of an answer. An answer of
 * many broken candidates would otherwise cost the per-text bound once per candidate. Searching
 * is synchronous, so one search never sees another's budget.
 */
let repairBudget = Number.POSITIVE_INFINITY;

/** Runs `search` with at most `chars` characters of jsonrepair work across all its parses. */
export function withRepairBudget<T>(chars: number, search: () => T): T {
  const outer = repairBudget;
  repairBudget = chars;
  try {
    return search();
  } finally {
    repairBudget = outer;
  }
}

/**
 * JSON as local models write it: strict first, then repaired by jsonrepair (trailing commas,
 * single quotes, Python's True/False/None, raw newlines in strings, missing closing brackets).
 * Undefined when even the repair fails, or when the text is too long to repair in bounded time
 * and is not fixed by escaping raw line breaks alone.
 */
export function parseLenientJson(text: string): unknown {
  const strict = tryParse(text);
  if (strict !== undefined) return strict.value;
  if (text.length > MAX_REPAIR_CHARS || text.length > repairBudget) return tryParse(escapeRawControls(text))?.value;
  repairBudget -= text.length;
  try {
    return JSON.parse(jsonrepair(text)) as unknown;
  } catch {
    return undefined;
  }
}

function tryParse(text: string): { value: unknown } | undefined {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch {
    return undefined;
  }
}

const RAW_ESCAPES = new Map([
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
]);

/** The text with line breaks and tabs inside strings escaped, in one pass. */
function escapeRawControls(text: string): string {
  let out = '';
  let from = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (!inString) inString = c === '"';
    else if (c === '\\') i++;
    else if (c === '"') inString = false;
    else {
      const escaped = RAW_ESCAPES.get(c);
      if (escaped === undefined) continue;
      out += text.slice(from, i) + escaped;
      from = i + 1;
    }
  }
  return out + text.slice(from);
}
