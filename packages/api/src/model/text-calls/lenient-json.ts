import { jsonrepair } from 'jsonrepair';

/**
 * JSON as local models write it: strict first, then repaired by jsonrepair (trailing commas,
 * single quotes, Python's True/False/None, raw newlines in strings, missing closing brackets).
 * Undefined when even the repair fails.
 */
export function parseLenientJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // fall through to the repair
  }
  try {
    return JSON.parse(jsonrepair(text)) as unknown;
  } catch {
    return undefined;
  }
}

/** Index just past the bracket closing the one at `start`, ignoring brackets inside strings; -1 if none. */
export function closingIndex(text: string, start: number, limit = text.length): number {
  let depth = 0;
  let quote = '';
  for (let i = start; i < limit; i++) {
    const c = text[i];
    if (quote !== '') {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"') quote = c;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}
